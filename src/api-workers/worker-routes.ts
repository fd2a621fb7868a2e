import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { createAuth, PasswordCheck } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { createHttpServer, type ApiContracts } from '../http/index.js';
import { registerMetricsApi, type MetricReplica } from '../monitor/index.js';
import { IpIgnoreList, TrafficMeter, type RequestCounter } from '../session/index.js';

/** A worker's HTTP side under one config: the same server conventions and route code as the main's. */
export interface WorkerRoutes {
  readonly config: Config;
  /** The node server behind fastify; it never listens: socket-exchange.ts hands it its requests. */
  readonly http: Server;
  /** The configured credentials, for the check before a login is answered here (worker-answers.ts). */
  readonly passwords: PasswordCheck | undefined;
}

export interface WorkerRoutesDeps {
  logger: Logger;
  contracts: ApiContracts;
  replica: MetricReplica;
  /** Where the answered requests are counted as `http` sessions (the main process's collector). */
  requests: RequestCounter;
}

/**
 * Builds what a worker answers with under `config`: the HTTP server of `createHttpServer` (error
 * envelope, CORS, compression, time-outs), authentication as `createAuth` registers it (the login
 * routes and the guard of `/api/v3`), the `http` session count, and the metrics routes over the
 * replica. A config change
 * builds it anew, so every key these read takes effect exactly as in the main process.
 */
export async function buildWorkerRoutes(config: Config, deps: WorkerRoutesDeps): Promise<WorkerRoutes> {
  const { server, localOnly } = await createHttpServer(config, deps.logger, { contracts: deps.contracts });
  const auth = await createAuth(config, { logger: deps.logger, now: Date.now, fetch, localOnly });
  await auth.register(server);
  // After the guard, as in the main process: a request it refuses is not counted there either.
  // `config` is fixed for these routes (a change builds them anew), so the flag is read once.
  new TrafficMeter(new IpIgnoreList(() => config.sessions.ip_ignorelist), deps.requests).install(
    server,
    () => config.sessions.enable,
  );
  await server.register(
    async (v3) => registerMetricsApi(v3, deps.replica, config.api.max_body_kbytes * 1024),
    { prefix: '/api/v3' },
  );
  await server.ready();
  const settings = config.api.auth;
  return {
    config,
    http: server.server,
    passwords: settings.enable ? new PasswordCheck(settings.username, settings.password) : undefined,
  };
}
