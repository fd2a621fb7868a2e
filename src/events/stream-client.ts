import type { ServerResponse } from 'node:http';
import type { BusEvent, BusSubscriber, Replay } from './event-bus.js';
import type { EventPredicate } from './event-filter.js';

/** `text/event-stream` (SSE) or `application/x-json-stream` (one JSON object per line). */
export type StreamFormat = 'sse' | 'json';

export interface StreamClientOptions {
  format: StreamFormat;
  accepts: EventPredicate;
  /** Bytes written but not yet taken by the client above which it is dropped. */
  maxBufferedBytes: number;
  /** Told once when the client is dropped for not reading, with the bytes it left unread. */
  onDropped: (bufferedBytes: number) => void;
  /** The JSON text of an event in this stream's shape (default: the event object itself). */
  render?: (event: BusEvent) => string;
  /** The keep-alive line of a JSON stream (default `{"type":"keepalive","event":"keepalive"}`). */
  keepaliveLine?: string;
}

const KEEPALIVE: Record<StreamFormat, string> = {
  sse: ':keepalive\n\n',
  // `event` as well: the reference's clients (core-client-go) skip objects whose `event` is keepalive.
  json: '{"type":"keepalive","event":"keepalive"}\n',
};

/**
 * One client of an event stream: writes the events it accepts, in order and each once, framed for
 * its format, in one write per batch. A client that stops reading costs the server at most
 * `maxBufferedBytes` and one batch (plus the socket's own buffers): past that it is dropped.
 */
export class StreamClient implements BusSubscriber {
  /** The `seq` of the last event written (a replayed event is not written again when delivered). */
  private lastSeq = 0;
  private closed = false;

  constructor(
    private readonly response: ServerResponse,
    private readonly options: StreamClientOptions,
  ) {}

  /** Writes what a reconnecting client missed: the gap marker (if any) and the kept events. */
  replay(replay: Replay, nowMs: number): void {
    let text = '';
    if (replay.gap !== undefined) {
      const gap = JSON.stringify({ ts: nowMs, type: 'gap', event: 'gap', ...replay.gap });
      text += this.options.format === 'sse' ? `event: gap\ndata: ${gap}\n\n` : `${gap}\n`;
    }
    text += this.frames(replay.events);
    this.write(text);
  }

  deliver(events: readonly BusEvent[]): void {
    const text = this.frames(events);
    if (text !== '') this.write(text);
  }

  keepalive(): void {
    const line = this.options.keepaliveLine;
    this.write(
      line !== undefined && this.options.format === 'json' ? `${line}\n` : KEEPALIVE[this.options.format],
    );
  }

  /** Writes one JSON object of the stream's own (a media list), framed for the format. */
  send(json: string): void {
    this.write(this.options.format === 'sse' ? `data: ${json}\n\n` : `${json}\n`);
  }

  private frames(events: readonly BusEvent[]): string {
    let text = '';
    for (const event of events) {
      if (event.seq <= this.lastSeq || !this.options.accepts(event)) continue;
      this.lastSeq = event.seq;
      const json = this.options.render?.(event) ?? event.json;
      text +=
        this.options.format === 'sse'
          ? `id: ${event.seq}\nevent: ${event.type}\ndata: ${json}\n\n`
          : `${json}\n`;
    }
    return text;
  }

  private write(text: string): void {
    if (this.closed) return;
    const response = this.response;
    if (response.destroyed || response.writableEnded) {
      this.closed = true;
      return;
    }
    // Measured before the write: what an earlier write left is what the client did not take (a
    // write itself sits in the buffer until the socket is uncorked, at the end of this tick).
    if (response.writableLength > this.options.maxBufferedBytes) {
      this.closed = true;
      this.options.onDropped(response.writableLength);
      response.destroy();
      return;
    }
    response.write(text);
  }
}
