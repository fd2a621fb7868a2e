import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { DirectLane } from './direct-lane.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * The `serverFactory` of the fastify instance: a `node:http` server that offers each request to the
 * direct lane first and hands the rest to fastify. It sets the timeouts fastify sets on servers it
 * makes itself (fastify leaves them to the factory), from the options fastify resolved.
 */
export function createLaneServer(
  lane: DirectLane,
  fastifyHandler: Handler,
  options: Record<string, unknown>,
): Server {
  const server = createServer((request, response) => {
    if (!lane.handle(request, response)) fastifyHandler(request, response);
  });
  server.keepAliveTimeout = numberOption(options.keepAliveTimeout, server.keepAliveTimeout);
  server.requestTimeout = numberOption(options.requestTimeout, server.requestTimeout);
  server.setTimeout(numberOption(options.connectionTimeout, 0));
  const maxRequestsPerSocket = numberOption(options.maxRequestsPerSocket, 0);
  // As fastify: zero means node's default.
  if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
  return server;
}

function numberOption(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
