import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { IpIgnoreList } from './ip-ignorelist.js';
import type { SessionCollector } from './session-collector.js';

/** What the meter tells of `http` sessions: the collector, or an API worker's relay to it. */
export type RequestCounter = Pick<SessionCollector, 'requestStarted' | 'requestEnded' | 'countRequest'>;

/** Receives the bytes of one request once its response is over (headers included). */
export type ByteSink = (rxBytes: number, txBytes: number) => void;

interface Metered {
  /** `socket.bytesWritten` when metering began: nothing of this response was written yet. */
  writtenAtStart: number;
  readAtStart: number;
  /** Request body bytes a caller knows (read before metering began); the largest report wins. */
  knownBodyBytes: number;
  /** Metering began before the body was read: the socket's `bytesRead` delta counts it too. */
  bodyFromSocket: boolean;
  sinks: ByteSink[];
}

/**
 * Counts the bytes of HTTP requests for the collectors (docs/sessions.md#the-contract: "headers and bodies").
 * Transmitted bytes are the socket's `bytesWritten` delta over the response, so they include
 * the response headers and whatever compression produced. Received bytes are the request head,
 * measured from the parsed raw headers, plus the body: the socket's `bytesRead` delta when
 * metering began before the body was read, or the size the caller reports.
 *
 * Every request from a client outside the ignore list is one `http` session (one request,
 * opened and closed with it). Other modules attach their own sinks (`attribute`), which get the
 * same figures, whatever the client address.
 */
export class TrafficMeter {
  /** Keyed by the node request. */
  private readonly metered = new WeakMap<IncomingMessage, Metered>();

  constructor(
    private readonly ignoreList: IpIgnoreList,
    private readonly http: RequestCounter,
  ) {}

  /** Meters every request fastify answers while `enabled` answers true (`sessions.enable`). */
  install(server: FastifyInstance, enabled: () => boolean): void {
    server.addHook('onRequest', (request, reply, done) => {
      if (enabled()) this.meterRequest(request.raw, reply.raw, request.ip, request.routeOptions.url ?? '');
      done();
    });
  }

  /** One `http` session for a request from `remote` (outside the ignore list) to `route`. */
  private meterRequest(
    request: IncomingMessage,
    response: ServerResponse,
    remote: string,
    route: string,
  ): void {
    if (this.ignoreList.ignores(remote)) return;
    const http = this.http;
    http.requestStarted();
    this.attributeRaw(request, response, 0, (rx, tx) => {
      http.requestEnded();
      http.countRequest(remote, route, rx, tx);
    });
    // The body of this request is still unread: the socket counter will see it.
    const state = this.metered.get(request);
    if (state !== undefined) state.bodyFromSocket = true;
  }

  /**
   * Hands the bytes of `request` to `sink` when its response is over. `bodyBytes`: the size of a
   * request body that was already read (a PUT handled by now), 0 otherwise.
   */
  attribute(request: FastifyRequest, reply: FastifyReply, bodyBytes: number, sink: ByteSink): void {
    this.attributeRaw(request.raw, reply.raw, bodyBytes, sink);
  }

  private attributeRaw(
    request: IncomingMessage,
    response: ServerResponse,
    bodyBytes: number,
    sink: ByteSink,
  ): void {
    const state = this.metered.get(request);
    if (state !== undefined) {
      state.knownBodyBytes = Math.max(state.knownBodyBytes, bodyBytes);
      state.sinks.push(sink);
      return;
    }
    const socket = request.socket;
    const created: Metered = {
      writtenAtStart: socket.bytesWritten,
      readAtStart: socket.bytesRead,
      knownBodyBytes: bodyBytes,
      bodyFromSocket: false,
      sinks: [sink],
    };
    this.metered.set(request, created);
    // 'close' on the response fires once: after the last byte, or when the client went away.
    response.once('close', () => this.finish(request, created));
  }

  private finish(request: IncomingMessage, state: Metered): void {
    const socket = request.socket;
    const tx = Math.max(0, socket.bytesWritten - state.writtenAtStart);
    // Part of the body may have arrived with the head (before metering began): a known size wins.
    const fromSocket = state.bodyFromSocket ? Math.max(0, socket.bytesRead - state.readAtStart) : 0;
    const body = Math.max(state.knownBodyBytes, fromSocket);
    const rx = requestHeadBytes(request) + body;
    for (const sink of state.sinks) sink(rx, tx);
  }
}

/** Bytes of the request line and headers as sent (HTTP/1.1 framing: `name: value\r\n`). */
export function requestHeadBytes(raw: IncomingMessage): number {
  let bytes =
    (raw.method?.length ?? 0) + (raw.url?.length ?? 0) + ` HTTP/${raw.httpVersion}\r\n`.length + 1 + 2;
  const headers = raw.rawHeaders;
  for (let i = 0; i < headers.length; i += 2)
    bytes += (headers[i]?.length ?? 0) + (headers[i + 1]?.length ?? 0) + 4;
  return bytes;
}
