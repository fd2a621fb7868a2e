import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { RouteDoc } from '../http/index.js';
import { PROBE_DOCS } from '../probe/index.js';
import { PROCESS_DOCS } from '../process/index.js';

/** The reference's `/api/v3/cluster/process*` routes that core-client-go's `cluster` branch calls, and the process routes they are. */
const ALIASES: [HTTPMethods, string][] = [
  ['GET', ''],
  ['POST', ''],
  ['GET', '/:id'],
  ['PUT', '/:id'],
  ['DELETE', '/:id'],
  ['GET', '/:id/config'],
  ['GET', '/:id/state'],
  ['GET', '/:id/report'],
  ['GET', '/:id/metadata'],
  ['GET', '/:id/metadata/:key'],
  ['PUT', '/:id/metadata/:key'],
  ['PUT', '/:id/command'],
  ['GET', '/:id/probe'],
];

/** The aliases described as the process routes they stand for. */
export const PROCESS_ALIAS_DOCS: Record<string, RouteDoc> = Object.fromEntries(
  ALIASES.flatMap(([method, rest]) => {
    const key = `${method} /api/v3/process${rest}`;
    const doc = PROCESS_DOCS[key] ?? PROBE_DOCS[key];
    return doc === undefined
      ? []
      : [[`${method} /api/v3/cluster/process${rest}`, { ...doc, tags: ['cluster'] }]];
  }),
);

/**
 * Registers the aliases: each asks this node's own process route (with the client's credentials),
 * which answers for the whole cluster (forward.ts), and passes the answer on.
 */
export function registerProcessAliases(
  v3: FastifyInstance,
  selfAddress: () => string,
  fetchFn: typeof fetch,
): void {
  for (const [method, rest] of ALIASES) {
    v3.route({
      method,
      url: `/cluster/process${rest}`,
      handler: (request, reply) => relaySelf(request, reply, selfAddress(), fetchFn),
    });
  }
}

async function relaySelf(
  request: FastifyRequest,
  reply: FastifyReply,
  self: string,
  fetchFn: typeof fetch,
): Promise<FastifyReply> {
  const headers: Record<string, string> = { 'accept-encoding': 'identity' };
  if (typeof request.headers.authorization === 'string')
    headers.authorization = request.headers.authorization;
  const hasBody = request.body !== undefined && request.method !== 'GET';
  if (hasBody) headers['content-type'] = 'application/json';
  const answer = await fetchFn(self + request.url.replace('/api/v3/cluster/process', '/api/v3/process'), {
    method: request.method,
    headers,
    body: hasBody ? JSON.stringify(request.body) : undefined,
    signal: AbortSignal.timeout(15_000),
  });
  return reply
    .code(answer.status)
    .header('content-type', answer.headers.get('content-type') ?? 'application/json; charset=utf-8')
    .send(Buffer.from(await answer.arrayBuffer()));
}
