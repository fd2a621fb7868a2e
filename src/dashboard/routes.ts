import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, gzipWanted, holdsVersion, replyError } from '../http/index.js';
import type { DashboardAssets } from './assets.js';

/** The URL prefix the dashboard owns; the disk mount leaves it alone. */
export const DASHBOARD_PREFIX = '/dashboard';

/**
 * The page talks to its own origin only and is never framed: a script injected through data it
 * shows (a process id, a log line) could neither load code nor send data elsewhere. uPlot sizes
 * its elements through inline styles, hence `style-src 'unsafe-inline'`.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Revalidated on every load (cheap with the ETag), so a new build shows at once.
  'cache-control': 'no-cache',
} as const;

const ROUTE_OPTIONS = { compress: false, decompress: false, exposeHeadRoute: false } as const;

/** `GET /dashboard/…`: the built page, served without authentication (it holds no data; the API it calls is guarded). */
export function registerDashboardRoutes(server: FastifyInstance, assets: DashboardAssets | undefined): void {
  server.route({
    ...ROUTE_OPTIONS,
    method: ['GET', 'HEAD'],
    url: DASHBOARD_PREFIX,
    handler: (_request, reply) => reply.redirect(`${DASHBOARD_PREFIX}/`, 301),
  });
  server.route({
    ...ROUTE_OPTIONS,
    method: ['GET', 'HEAD'],
    url: `${DASHBOARD_PREFIX}/*`,
    handler: (request, reply) => serveAsset(request, reply, assets),
  });
}

function serveAsset(
  request: FastifyRequest,
  reply: FastifyReply,
  assets: DashboardAssets | undefined,
): FastifyReply {
  if (assets === undefined) {
    return replyError(
      reply,
      new ApiError('SERVICE_UNAVAILABLE', 'the dashboard was not built: run npm run build', {
        message: 'Dashboard not built',
      }),
    );
  }
  const query = request.url.indexOf('?');
  const path = (query === -1 ? request.url : request.url.slice(0, query)).slice(DASHBOARD_PREFIX.length + 1);
  const name = path === '' ? 'index.html' : path;
  const asset = assets.get(name);
  if (asset === undefined) {
    return replyError(
      reply,
      new ApiError('NOT_FOUND', `${DASHBOARD_PREFIX}/${name}`, { message: 'File not found' }),
    );
  }
  void reply.headers(SECURITY_HEADERS).header('etag', asset.etag).header('content-type', asset.contentType);
  if (holdsVersion(request, asset.etag)) return reply.code(304).send();
  if (gzipWanted(reply, asset.body.length)) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}
