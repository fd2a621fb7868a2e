import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../http/index.js';
import type { BusEvent, EventBus } from './event-bus.js';
import type { EventPredicate } from './event-filter.js';
import { StreamClient, type StreamFormat } from './stream-client.js';

export interface EventStreamsOptions {
  bus: EventBus;
  logger: Logger;
  now: () => number;
  /** `events.max_buffered_kbytes` in bytes: what a client that stops reading may leave unread. */
  maxBufferedBytes: number;
  /** Between two keep-alive lines, ms (the reference: 5 s). */
  keepaliveMs: number;
}

/**
 * The open event streams: opens one per request (the answer is written by hand, not by fastify:
 * it never ends and is never compressed), and ends them all at shutdown, after the last events
 * were handed out (the HTTP server waits for open answers before it closes).
 */
export class EventStreams {
  private readonly open = new Set<FastifyReply>();

  constructor(private readonly options: EventStreamsOptions) {}

  /**
   * Answers `request` with a stream of the events `spec.accepts` lets through, first those after
   * `spec.lastSeq` (when given) that the bus still keeps, after a gap marker when some are gone.
   * SSE when the request's Accept asks for it (and `spec.jsonOnly` is not set).
   */
  start(request: FastifyRequest, reply: FastifyReply, spec: StreamSpec): StreamClient {
    const { bus, logger } = this.options;
    const format: StreamFormat =
      spec.jsonOnly !== true && /text\/event-stream/i.test(request.headers.accept ?? '') ? 'sse' : 'json';
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': `${format === 'sse' ? 'text/event-stream' : 'application/x-json-stream'}; charset=utf-8`,
      'cache-control': 'no-store',
      // A proxy in front (nginx) must pass each event on at once.
      'x-accel-buffering': 'no',
    });
    // The stream has its own liveness (keep-alive lines, the buffered-bytes bound).
    request.raw.socket.setTimeout(0);
    const client = new StreamClient(response, {
      format,
      accepts: spec.accepts,
      render: spec.render,
      keepaliveLine: spec.keepaliveLine,
      maxBufferedBytes: this.options.maxBufferedBytes,
      onDropped: (bufferedBytes) =>
        logger.warn(
          { component: 'events', client: request.ip, buffered_bytes: bufferedBytes },
          'event stream client dropped: it stopped reading',
        ),
    });
    client.keepalive();
    if (spec.lastSeq !== undefined) client.replay(bus.since(spec.lastSeq), this.options.now());
    const unsubscribe = bus.subscribe(client);
    const timer = setInterval(() => client.keepalive(), this.options.keepaliveMs);
    this.open.add(reply);
    response.once('close', () => {
      unsubscribe();
      clearInterval(timer);
      this.open.delete(reply);
    });
    return client;
  }

  /** Hands out the pending events, then ends every stream. */
  closeAll(): void {
    this.options.bus.flush();
    for (const reply of this.open) reply.raw.end();
  }
}

/** What one stream sends. */
export interface StreamSpec {
  accepts: EventPredicate;
  lastSeq?: number;
  /** Each event's JSON text in this stream's shape (default: the event object). */
  render?: (event: BusEvent) => string;
  /** The JSON stream's keep-alive object (default `{"type":"keepalive","event":"keepalive"}`). */
  keepaliveLine?: string;
  /** Always `application/x-json-stream` (the reference's media stream). */
  jsonOnly?: boolean;
}

/** The `Last-Event-ID` header (SSE's reconnect) or the body's `last_seq`; the body wins. */
export function lastSeqOf(request: FastifyRequest, fromBody: number | undefined): number | undefined {
  if (fromBody !== undefined) return fromBody;
  const header = request.headers['last-event-id'];
  if (header === undefined || header === '') return undefined;
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header.trim())) {
    throw new ApiError('BAD_REQUEST', 'Last-Event-ID: must be the seq of an event (a non-negative integer)');
  }
  return Number(header.trim());
}
