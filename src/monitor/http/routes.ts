import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import { addVary, ApiError, describeJsonSyntaxError, EncodedBody } from '../../http/index.js';
import {
  EXPOSITION_CONTENT_TYPES,
  negotiateFormat,
  ScrapeCredential,
  type PrometheusExposition,
} from '../prometheus/index.js';
import { QueryError, QueryTimeoutError, type MetricsQueryService } from '../query/index.js';
import { registerRawJsonBody, type RawJsonBody } from './raw-json-body.js';
import { sendBody } from './send-body.js';

/** What the metrics routes read of the monitor (monitor.ts, which composes this room). */
export interface MetricsSource {
  /** The catalog as JSON text (it never changes). */
  readonly catalogJson: string;
  readonly query: MetricsQueryService;
  readonly exposition: PrometheusExposition;
  /** Is periodic collection on? */
  readonly enabled: boolean;
  /** Makes sure the store holds a snapshot for a scrape (on-demand collection when off). */
  prepareScrape(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** These routes encode their cached answers themselves (see send-body.ts). */
const ROUTE_OPTIONS = { compress: false } as const;
/** … and GET requests have no body to decompress: no per-request hook of @fastify/compress at all. */
const GET_OPTIONS = { compress: false, decompress: false } as const;

/**
 * `GET /api/v3/metrics` (catalog) and `POST /api/v3/metrics` (query), also with a trailing slash
 * (docs/metrics.md#query-api-get-and-post-apiv3metrics). Register inside the `/api/v3` scope, after its guard. `bodyLimitBytes`: the bound on
 * JSON bodies (config `api.max_body_kbytes`).
 */
export async function registerMetricsApi(
  v3: FastifyInstance,
  monitor: MetricsSource,
  bodyLimitBytes: number,
): Promise<void> {
  // The catalog never changes: one body, encoded once.
  const catalogBody = new EncodedBody(monitor.catalogJson);
  const catalog = (_request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> =>
    sendBody(reply, JSON_TYPE, catalogBody);
  const query = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const raw = request.body as RawJsonBody | undefined;
    const cached = raw !== undefined ? monitor.query.cachedAnswer(raw.text) : undefined;
    if (cached !== undefined) return sendBody(reply, JSON_TYPE, cached);
    const answer = await answerQuery(monitor, raw);
    // 'finish': the last byte is with the kernel, so the answer's memory can serve another answer.
    if (monitor.query.reusesMemory(answer)) reply.raw.once('finish', () => monitor.query.written(answer));
    return sendBody(reply, JSON_TYPE, answer);
  };
  for (const path of ['/metrics', '/metrics/']) {
    v3.get(path, GET_OPTIONS, catalog);
  }
  // The query routes get their bodies as text, in a scope of their own.
  await v3.register((scope, _options, done) => {
    registerRawJsonBody(scope, bodyLimitBytes);
    for (const path of ['/metrics', '/metrics/']) scope.post(path, ROUTE_OPTIONS, query);
    done();
  });
}

/** Parses and answers a query body that is not in the cache; errors become 400 answers. */
async function answerQuery(monitor: MetricsSource, raw: RawJsonBody | undefined): Promise<EncodedBody> {
  let body: unknown;
  if (raw !== undefined) {
    try {
      body = JSON.parse(raw.text);
    } catch (error) {
      throw new ApiError('INVALID_JSON', describeJsonSyntaxError(raw.text, (error as Error).message));
    }
  }
  try {
    return await monitor.query.answer(body, raw?.text);
  } catch (error) {
    if (error instanceof QueryError) throw new ApiError('BAD_REQUEST', error.details);
    if (error instanceof QueryTimeoutError) throw new ApiError('SERVICE_UNAVAILABLE', error.details);
    throw error;
  }
}

/**
 * `GET /metrics` at the root (docs/metrics.md#prometheus-get-metrics): 404 while `metrics.enable_prometheus` is off (the route
 * stays registered so the disk mount at `/` never serves a file called `metrics` instead), the
 * optional scrape credential, then the exposition in the format the scraper asked for.
 */
export function registerPrometheusEndpoint(
  server: FastifyInstance,
  monitor: MetricsSource,
  config: Config,
): void {
  const enabled = config.metrics.enable_prometheus;
  const credential = new ScrapeCredential(config.metrics.prometheus);
  const send = (request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<FastifyReply> => {
    const format = negotiateFormat(request.headers.accept);
    addVary(reply, 'Accept, Accept-Encoding');
    return sendBody(reply, EXPOSITION_CONTENT_TYPES[format], monitor.exposition.body(format));
  };
  server.get('/metrics', GET_OPTIONS, (request, reply) => {
    if (!enabled) {
      throw new ApiError(
        'NOT_FOUND',
        'GET /metrics: the Prometheus endpoint is off (metrics.enable_prometheus)',
      );
    }
    if (!credential.accepts(request.headers.authorization)) {
      throw new ApiError('UNAUTHORIZED', 'Missing or invalid scrape credential', {
        headers: { 'www-authenticate': credential.challenge() },
      });
    }
    // With periodic collection the store already holds the latest snapshot: no waiting at all.
    if (monitor.enabled) return send(request, reply);
    return monitor.prepareScrape().then(() => send(request, reply));
  });
}
