import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';

/** One event object as a stream sends it. */
export interface StreamEvent {
  seq?: number;
  ts: number;
  /** Absent from the reference's media stream (`action` instead). */
  type: string;
  event: string;
  [field: string]: unknown;
}

/**
 * A client of `POST /api/v3/events…` over node's own HTTP client, reading SSE or the JSON stream
 * as it arrives. Keep-alive lines are counted, not kept; SSE `id:` lines are checked against `seq`.
 */
export class EventReader {
  readonly events: StreamEvent[] = [];
  keepalives = 0;
  status = 0;
  headers: IncomingMessage['headers'] = {};
  ended = false;
  error: Error | undefined;
  private response: IncomingMessage | undefined;
  private pending = '';

  private constructor(readonly format: 'sse' | 'json') {}

  static open(
    baseUrl: string,
    options: { path?: string; format: 'sse' | 'json'; body?: unknown; headers?: Record<string, string> },
  ): Promise<EventReader> {
    const reader = new EventReader(options.format);
    const body = options.body === undefined ? '' : JSON.stringify(options.body);
    return new Promise((resolve, reject) => {
      const req = request(`${baseUrl}/api/v3${options.path ?? '/events'}`, {
        method: 'POST',
        headers: {
          ...(body === '' ? {} : { 'content-type': 'application/json' }),
          accept: options.format === 'sse' ? 'text/event-stream' : 'application/x-json-stream',
          ...options.headers,
        },
      });
      req.once('error', reject);
      req.once('response', (response) => {
        reader.response = response;
        reader.status = response.statusCode ?? 0;
        reader.headers = response.headers;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => reader.take(chunk));
        response.once('close', () => {
          reader.ended = true;
        });
        response.once('error', (error) => {
          reader.error = error;
        });
        resolve(reader);
      });
      req.end(body);
    });
  }

  /** Waits (polling, with a deadline) until `predicate` holds for the events read so far. */
  async until(
    predicate: (events: StreamEvent[]) => boolean,
    what: string,
    timeoutMs = 20_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      if (Date.now() > deadline) {
        assert.fail(
          `timed out waiting for ${what}; events: ${JSON.stringify(this.events.slice(-5)).slice(0, 2000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  close(): void {
    this.response?.destroy();
  }

  private take(chunk: string): void {
    this.pending += chunk;
    const separator = this.format === 'sse' ? '\n\n' : '\n';
    let at: number;
    while ((at = this.pending.indexOf(separator)) >= 0) {
      const frame = this.pending.slice(0, at);
      this.pending = this.pending.slice(at + separator.length);
      if (this.format === 'json') this.takeObject(frame);
      else this.takeMessage(frame);
    }
  }

  private takeObject(line: string): void {
    const parsed = JSON.parse(line) as StreamEvent;
    if (parsed.type === 'keepalive' || parsed.action === 'keepalive') this.keepalives++;
    else this.events.push(parsed);
  }

  private takeMessage(message: string): void {
    if (message.startsWith(':')) {
      this.keepalives++;
      return;
    }
    const fields = new Map<string, string>();
    for (const line of message.split('\n')) {
      const colon = line.indexOf(':');
      fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
    }
    const event = JSON.parse(fields.get('data') ?? 'null') as StreamEvent;
    assert.equal(fields.get('event'), event.type, 'the SSE event name is the type');
    if (event.seq !== undefined) assert.equal(fields.get('id'), String(event.seq), 'the SSE id is the seq');
    this.events.push(event);
  }
}
