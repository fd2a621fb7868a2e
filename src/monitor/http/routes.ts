import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import { ApiError } from '../../http/index.js';
import type { Monitor } from '../monitor.js';
import { EXPOSITION_CONTENT_TYPES, negotiateFormat, ScrapeCredential } from '../prometheus/index.js';
import { QueryError } from '../query/index.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * `GET /api/v3/metrics` (catalog) and `POST /api/v3/metrics` (query), also with a trailing slash
 * (SPEC §5). Register inside the `/api/v3` scope, after its guard.
 */
export function registerMetricsApi(v3: FastifyInstance, monitor: Monitor): void {
  // The catalog never changes: one buffer, sent as is.
  const catalogBody = Buffer.from(monitor.catalogJson, 'utf8');
  const catalog = (_request: FastifyRequest, reply: FastifyReply): FastifyReply =>
    reply.header('content-type', JSON_TYPE).send(catalogBody);
  const query = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    let answer: string;
    try {
      answer = monitor.query.answer(request.body);
    } catch (error) {
      if (error instanceof QueryError) throw new ApiError('BAD_REQUEST', error.details);
      throw error;
    }
    return reply.header('content-type', JSON_TYPE).send(answer);
  };
  for (const path of ['/metrics', '/metrics/']) {
    v3.get(path, catalog);
    v3.post(path, query);
  }
}

/**
 * `GET /metrics` at the root (SPEC §6): 404 while `metrics.enable_prometheus` is off (the route
 * stays registered so the disk mount at `/` never serves a file called `metrics` instead), the
 * optional scrape credential, then the exposition in the format the scraper asked for.
 */
export function registerPrometheusEndpoint(server: FastifyInstance, monitor: Monitor, config: Config): void {
  const enabled = config.metrics.enable_prometheus;
  const credential = new ScrapeCredential(config.metrics.prometheus);
  server.get('/metrics', async (request, reply) => {
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
    await monitor.prepareScrape();
    const format = negotiateFormat(request.headers.accept);
    return reply
      .header('content-type', EXPOSITION_CONTENT_TYPES[format])
      .header('vary', 'Accept')
      .send(monitor.exposition.render(format));
  });
}
