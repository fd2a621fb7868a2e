import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config/index.js';
import { AddressList } from './address-list.js';
import { capConnectionsPerAddress } from './connection-cap.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** The connection limits of `api.timeouts` and `api.connections`, as node wants them (milliseconds). */
export interface ConnectionLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxPerAddress: number;
  exempt: readonly string[];
}

export function connectionLimitsOf(api: Config['api']): ConnectionLimits {
  const { timeouts, connections } = api;
  return {
    headersTimeoutMs: timeouts.header_sec * 1000,
    requestTimeoutMs: timeouts.request_sec * 1000,
    idleTimeoutMs: timeouts.idle_sec * 1000,
    keepAliveTimeoutMs: timeouts.keepalive_sec * 1000,
    maxPerAddress: connections.max_per_address,
    exempt: connections.exempt,
  };
}

/**
 * The `serverFactory` of the fastify instance: a `node:http` server that hands every request to
 * fastify. It sets the time-outs (fastify leaves them to a factory) and caps the connections per
 * client address.
 */
export function createNodeServer(
  fastifyHandler: Handler,
  limits: ConnectionLimits,
  options: Record<string, unknown>,
): Server {
  const shortest = Math.min(
    limits.headersTimeoutMs,
    limits.requestTimeoutMs > 0 ? limits.requestTimeoutMs : Infinity,
  );
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the header and request time-outs on this period (default 30 s, which would
      // let a 10 s header limit run to 40 s); the check walks the open connections only.
      connectionsCheckingInterval: Math.max(100, Math.min(1000, shortest / 2)),
    },
    fastifyHandler,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // A client may end its side once it has sent its request (a half-close, which HTTP/1.1 allows).
  // By default node then aborts the requests under way and ends the connection at once, so an
  // answer that takes a tick (most do) was lost (about one in 40 metric queries). With this node
  // lets the answer under way finish and then ends the connection. Not in node's typings; read by
  // its server on every client end (lib/_http_server.js, `socketOnEnd`).
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // The sockets it accepts itself are half-open already; those it is given (HTTPS, a second
  // listener, a connection an API worker handed back) are made so here, or node would end them at
  // the client's end before the answer.
  server.on('connection', (socket: Socket) => {
    socket.allowHalfOpen = true;
  });
  // No request and no answer byte for this long: closed (a body that stalls half-way included).
  server.setTimeout(limits.idleTimeoutMs);
  const maxRequestsPerSocket = numberOption(options.maxRequestsPerSocket, 0);
  // As fastify: zero means node's default.
  if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
  capConnectionsPerAddress(server, limits.maxPerAddress, new AddressList(limits.exempt));
  return server;
}

function numberOption(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
