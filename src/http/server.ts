import compress from '@fastify/compress';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { ReloadStep } from '../lifecycle/index.js';
import { GZIP_THRESHOLD_BYTES } from './accept-encoding.js';
import { answerClientError } from './client-errors.js';
import { CorsPolicy, registerCors } from './cors.js';
import { registerErrorHandler, replyError, sendEnvelope } from './error-handler.js';
import { ApiError } from './errors.js';
import { registerJsonBodyParser } from './json-body.js';
import { LocalOnly } from './local-only.js';
import { registerSwaggerUi } from './swagger-ui.js';
import { lazySchemaCompilers } from './lazy-schema-compilers.js';
import { ServerLogController } from './log-controller.js';
import { connectionLimitsOf, createNodeServer } from './node-server.js';
import { RouteTable } from './route-table.js';
import { closeAfterUnreadBodies } from './unread-body.js';
import {
  HTTP_DOCS,
  installApiDescription,
  registerDocumentRoutes,
  SWAGGER_UI_PREFIX,
  type ApiContracts,
  type ApiDescription,
} from './openapi/index.js';
import { readFile } from 'node:fs/promises';
import type { onSendHookHandler } from 'fastify';

/** Where the API lies that a token guards (routes marked `public` excepted). */
const API_PREFIX = '/api/v3';

export interface HttpServer {
  readonly server: FastifyInstance;
  /** The API description: which routes are described, and which are not (a test forbids those). */
  readonly description: ApiDescription;
  /** A reload of `storage.cors.origins`: the next request answers with the new policy. */
  readonly corsReload: ReloadStep<Config>;
  /** What stands in for authentication while it is off; the auth module switches it with its guard. */
  readonly localOnly: LocalOnly;
}

export interface HttpServerOptions {
  /**
   * The domains' contracts: each route is described (and its request checked, where its contract
   * says so) as it is registered. Without them only the server's own routes are described.
   */
  contracts?: ApiContracts;
  /**
   * Sees every answer before it is compressed (first of the onSend hooks): the tests check each
   * answer against the route's described schema with it.
   */
  inspectAnswer?: onSendHookHandler;
}

/**
 * Creates the HTTP server with the conventions every route shares: the error envelope, strict JSON
 * bodies, 404/405 answers, CORS and gzip. Routes are added by the feature modules afterwards.
 */
export async function createHttpServer(
  config: Config,
  logger: Logger,
  options: HttpServerOptions = {},
): Promise<HttpServer> {
  const trustedProxies = config.api.trusted_proxies;
  // Both policies built: authentication turned on or off by a reload switches between them.
  let cors = corsPolicies(config.storage.cors.origins);
  const localOnly = new LocalOnly(!config.api.auth.enable, API_PREFIX, {
    // The running configuration, which a reload updates in place.
    address: () => config.address,
    tlsAddress: () => config.tls.address,
  });
  const limits = connectionLimitsOf(config.api);
  const server = Fastify({
    serverFactory: (handler, options) => createNodeServer(handler, limits, options),
    // The factory applies these; fastify is told too, so what it reports matches (docs/security.md).
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // No logger for fastify itself: with one, fastify makes a child logger and attaches two
    // response listeners for every request, only to write request lines we do not want (about
    // 6 % of a bare fastify's cost per small answer, measured). Our modules log through `logger`
    // directly, and the log controller passes on the errors fastify reports.
    logController: new ServerLogController(logger),
    bodyLimit: config.api.max_body_kbytes * 1024,
    trustProxy: trustedProxies.length > 0 ? trustedProxies : false,
    // Keep-alive connections must not hold a shutdown open.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 1000 },
    // A URL that cannot be decoded (e.g. `/api/v3/%zz`) is answered before routing: envelope it too.
    frameworkErrors: (error, _request, reply) => {
      void sendEnvelope(reply, { code: 400, message: 'Bad Request', details: [error.message] });
    },
    clientErrorHandler: answerClientError,
    // Each route's schemas are compiled on its first request, not all at start (issue 11).
    schemaController: { compilersFactory: lazySchemaCompilers() },
  });
  // With authentication off, first of the onRequest hooks: a foreign page's preflight to the API
  // is refused, not answered.
  localOnly.register(server);
  // Then CORS: a preflight is answered before any guard sees it.
  registerCors(server, () => (localOnly.active ? cors.readsOnly : cors.full));
  const routeTable = new RouteTable();
  routeTable.attach(server);
  // Before any route: every route is described as it is registered.
  const contracts = options.contracts ?? { docs: HTTP_DOCS, sharedSchemas: [] };
  const description = await installApiDescription(server, contracts, await packageVersion());
  if (options.inspectAnswer !== undefined) server.addHook('onSend', options.inspectAnswer);

  registerJsonBodyParser(server, config.api.max_body_kbytes * 1024);
  closeAfterUnreadBodies(server);
  registerErrorHandler(server, logger);
  server.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routeTable.allowedMethods(request.method, path);
    if (allowed.length > 0) {
      return replyError(
        reply,
        new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}`, {
          headers: { allow: allowed.join(', ') },
        }),
      );
    }
    return replyError(reply, new ApiError('NOT_FOUND', `${request.method} ${path} is not a route`));
  });

  await server.register(compress, { global: true, threshold: GZIP_THRESHOLD_BYTES, encodings: ['gzip'] });

  registerDocumentRoutes(server);
  registerSwaggerUi(server, SWAGGER_UI_PREFIX);
  // Never compressed (4 bytes, under the threshold): without @fastify/compress on it, the liveness
  // answer does not load Node's fetch implementation, which that plugin's `instanceof Response`
  // check does on its first answer (~0.1-0.3 s of CPU at start, issue 11). The first API answer
  // pays that instead.
  server.get('/ping', { compress: false }, async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').send('pong'),
  );
  const corsReload: ReloadStep<Config> = {
    name: 'cors',
    keys: ['storage.cors.origins'],
    prepare: (next) => {
      const policies = corsPolicies(next.storage.cors.origins);
      return { commit: () => void (cors = policies), abort: () => undefined };
    },
  };
  return { server, description, corsReload, localOnly };
}

/** The policy of `origins` with authentication on (`full`) and off (`readsOnly`). */
function corsPolicies(origins: readonly string[]): { full: CorsPolicy; readsOnly: CorsPolicy } {
  return { full: new CorsPolicy(origins), readsOnly: new CorsPolicy(origins, true) };
}

/** The `version` of package.json (from src/http/ and dist/http/ alike, two levels up). */
async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
