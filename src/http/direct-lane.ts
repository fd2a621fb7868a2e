import type { IncomingMessage, ServerResponse } from 'node:http';
import { acceptsGzip, GZIP_THRESHOLD_BYTES } from './accept-encoding.js';
import type { CorsPolicy } from './cors.js';

/** A body the lane sends as it is, or gzip-encoded once that encoding exists. */
export interface PreparedBody {
  readonly bytes: Buffer;
  /** The gzip encoding if made already; the lane never waits for one. */
  gzippedIfReady(): Buffer | undefined;
}

interface DirectRoute {
  /** The route's path as the framework names it (the `http` sessions' label). */
  readonly route: string;
  readonly contentType: string;
  readonly body: () => PreparedBody;
  /** The admission checks of the prefixes this path lies under; filled when the lane opens. */
  admissions: ((request: IncomingMessage) => boolean)[];
}

interface PrefixAdmission {
  readonly prefix: string;
  readonly admits: (request: IncomingMessage) => boolean;
}

/** Starts metering an answer the lane is about to send (see TrafficMeter.meterDirect). */
export type DirectMeter = (request: IncomingMessage, response: ServerResponse, route: string) => void;

/**
 * Answers a few hot `GET` routes whose body is prepared in advance (the metrics catalog) before
 * fastify builds its request and reply objects, routes and runs its hooks: that machinery costs
 * more than the answer itself (a bare `Fastify()` reached 0.76–0.97× of bare `node:http` on the
 * catalog, see docs/metrics.md). The lane serves only requests whose answer it knows to be the
 * one fastify would give; for everything else `handle` returns false and fastify answers:
 *
 * - method `GET`, the request target exactly a registered path (no query), no request body;
 * - every admission check of a prefix above the path passes (the `/api/v3` guard registers its
 *   synchronous check: a bearer token already verified and still valid; a new or bad token goes
 *   the framework's way and gets the same 200 or 401 there);
 * - a client accepting gzip gets the gzip encoding only once it exists (the framework path makes it);
 * - the lane is open: after the server is ready, before it starts closing (fastify then answers 503).
 *
 * The answers carry the headers of the framework's: CORS from the same policy, `Vary`,
 * `Content-Type`, `Content-Length`, and `Content-Encoding` when encoded; the `http` session meter
 * sees them like any other request. test/http/direct-lane.test.ts compares the two paths' answers
 * header for header. A root `onRequest` hook added later that changes answers must register its
 * counterpart here (or the lane must stop serving the paths it concerns).
 */
export class DirectLane {
  private readonly routes = new Map<string, DirectRoute>();
  private readonly admissions: PrefixAdmission[] = [];
  private meter: DirectMeter | undefined;
  private isOpen = false;
  private answers = 0;

  /** `enabled` false: the lane never answers (used when client addresses come from a proxy header). */
  constructor(
    private readonly cors: CorsPolicy,
    private readonly enabled: boolean,
  ) {}

  /** Serves `GET path` with `body()`, `route` naming it as the framework's route does. */
  serve(path: string, route: string, contentType: string, body: () => PreparedBody): void {
    this.routes.set(path, { route, contentType, body, admissions: [] });
  }

  /** Requests for paths at or below `prefix` are served only when `admits` says so. */
  admit(prefix: string, admits: (request: IncomingMessage) => boolean): void {
    this.admissions.push({ prefix, admits });
  }

  /** Every answer of the lane is handed to `meter` before it is written. */
  meterWith(meter: DirectMeter): void {
    this.meter = meter;
  }

  /** Starts answering: call once every module has registered (the server is ready). */
  open(): void {
    for (const [path, route] of this.routes) {
      route.admissions = this.admissions
        .filter(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`))
        .map(({ admits }) => admits);
    }
    this.isOpen = this.enabled;
  }

  /** Stops answering: from now on every request goes to the framework. */
  close(): void {
    this.isOpen = false;
  }

  /** How many requests the lane has answered (the rest went to fastify). */
  get answered(): number {
    return this.answers;
  }

  /** Answers `request` and returns true, or returns false without touching `response`. */
  handle(request: IncomingMessage, response: ServerResponse): boolean {
    if (!this.isOpen || request.method !== 'GET') return false;
    const route = this.routes.get(request.url ?? '');
    if (route === undefined) return false;
    const headers = request.headers;
    if (headers['transfer-encoding'] !== undefined) return false;
    const declaredLength = headers['content-length'];
    if (declaredLength !== undefined && declaredLength !== '0') return false;
    for (const admits of route.admissions) if (!admits(request)) return false;

    const prepared = route.body();
    let bytes = prepared.bytes;
    let encoded = false;
    const varies = bytes.length >= GZIP_THRESHOLD_BYTES;
    if (varies && acceptsGzip(headers['accept-encoding'])) {
      const gzipped = prepared.gzippedIfReady();
      if (gzipped === undefined) return false;
      bytes = gzipped;
      encoded = true;
    }

    // The headers of the framework's answer: CORS (its hook), then the route's own (send-body.ts).
    const head = this.cors.answerHeaders(headers.origin).slice();
    let vary = varies ? 'Accept-Encoding' : '';
    if (!this.cors.anyOrigin) vary = varies ? 'Origin, Accept-Encoding' : 'Origin';
    head.push('content-type', route.contentType);
    if (vary !== '') head.push('vary', vary);
    if (encoded) head.push('content-encoding', 'gzip');
    head.push('content-length', String(bytes.length));

    this.meter?.(request, response, route.route);
    response.writeHead(200, head);
    response.end(bytes);
    this.answers++;
    return true;
  }
}
