import type { Server, Socket } from 'node:net';
import pino from 'pino';
import type { ApiContracts } from '../http/index.js';
import type { Config } from '../config/index.js';
import { MetricReplica } from '../monitor/index.js';
import { EncoderConnections } from '../process/index.js';
import { ConnectionRelay } from './connection-relay.js';
import { exchangeOnSocket } from './socket-exchange.js';
import { RequestTally } from './request-tally.js';
import { buildWorkerRoutes, type WorkerRoutes } from './worker-routes.js';
import type { FromWorker, ToWorker } from './messages.js';
import { workerAnswers, type WorkerState } from './worker-answers.js';

/** How long a stopping worker lets the answers under way finish, ms. */
const STOP_GRACE_MS = 1000;

/**
 * The API worker: a child process of the server (api-workers/worker-pool.ts) that accepts on the
 * server's listening socket and answers the requests that need no state of the main process
 * (worker-answers.ts) with the same route code as the main process; every other connection is
 * handed back. It lives as long as its IPC channel: when the main process goes, so does it.
 */
export function runApiWorker(contracts: ApiContracts): void {
  const send = (message: FromWorker, handle?: Socket): void => {
    if (process.connected) process.send?.(message, handle as never);
  };
  const logger = pino({ level: 'warn', base: { worker: process.pid } });
  const state: WorkerState = {
    routes: undefined,
    replica: undefined,
    throttled: { addresses: new Set(), usernames: new Set() },
    encoders: new EncoderConnections({ procRoot: '/proc', encoderPids: () => encoderPids }),
    encodersRunning: () => encoderPids.size > 0,
  };
  let encoderPids: ReadonlySet<number> = new Set();
  let listener: Server | undefined;
  const requests = new RequestTally((counted) => send({ type: 'requests', counted }));
  const open = new Set<ConnectionRelay>();
  // Config changes are built one after the other, in the order they were sent.
  let building: Promise<void> = Promise.resolve();

  const accept = (socket: Socket): void => {
    const routes = state.routes;
    if (routes === undefined) {
      send({ type: 'hand-off', bytes: new Uint8Array(0) }, socket);
      return;
    }
    const relay: ConnectionRelay = new ConnectionRelay(socket, {
      answersHere: (request, body, from) => workerAnswers(state, request, body, from),
      serve: (request, body, socket, ended) => {
        const http = state.routes?.http;
        // No routes now (cannot happen once built: a config change replaces them, never clears them).
        if (http === undefined) return socket.destroy();
        exchangeOnSocket(http, socket, request, body, ended);
      },
      handOff: (handed, unread) => {
        open.delete(relay);
        send({ type: 'hand-off', bytes: unread }, handed);
      },
      maxBodyBytes: routes.config.api.max_body_kbytes * 1024,
      keepAliveMs: routes.config.api.timeouts.keepalive_sec * 1000,
      idleMs: routes.config.api.timeouts.idle_sec * 1000,
    });
    open.add(relay);
    socket.once('close', () => open.delete(relay));
  };

  const applyConfig = async (config: Config, sent: number): Promise<void> => {
    state.replica ??= new MetricReplica(config);
    const routes: WorkerRoutes = await buildWorkerRoutes(config, {
      logger,
      contracts,
      replica: state.replica,
      requests,
    });
    state.routes = routes;
    send({ type: 'applied', generation: sent });
  };

  process.on('message', (message: ToWorker, handle: unknown) => {
    switch (message.type) {
      case 'config':
        building = building.then(() =>
          applyConfig(message.config, message.generation).catch((error: unknown) => {
            logger.error({ err: error }, 'API worker: the config could not be applied; stopping');
            process.exit(1);
          }),
        );
        return;
      case 'listen':
        listener?.close();
        listener = handle as Server;
        listener.on('connection', accept);
        return;
      case 'snapshot':
        state.replica?.apply(message.snapshot);
        return;
      case 'throttle':
        state.throttled = { addresses: new Set(message.addresses), usernames: new Set(message.usernames) };
        return;
      case 'encoders':
        encoderPids = new Set(message.pids);
        return;
    }
  });
  const stop = (): void => {
    requests.flush();
    listener?.close();
    listener = undefined;
    setTimeout(() => process.exit(0), open.size === 0 ? 0 : STOP_GRACE_MS);
  };
  process.on('disconnect', stop);
  process.on('SIGTERM', stop);
  // Ctrl-C reaches the whole process group: the main process stops the workers in its own order.
  process.on('SIGINT', () => undefined);
  // A fault outside a request must not end the worker (the main process would restart it, but the
  // connections it holds would be cut).
  process.on('uncaughtException', (error) => logger.error({ err: error }, 'API worker: uncaught exception'));
  process.on('unhandledRejection', (reason) =>
    logger.error({ err: reason }, 'API worker: unhandled rejection'),
  );
}
