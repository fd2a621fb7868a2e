import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../http/index.js';
import { placingOfConfig } from './candidates.js';
import { peerFetch } from './peer-fetch.js';
import { placeCreate } from './create-placement.js';
import type { ReferencePlacement } from './placement.js';
import { RecentPlacements } from './recent-placements.js';
import type { ClusterSnapshot } from './view.js';

/** Marks a request one node sends another: it is answered from the receiving node's own processes. */
export const HOP_HEADER = 'x-streamcore-cluster-hop';
/** Marks a create another node passed to the leader for placement: it is placed, never passed on again. */
const VIA_HEADER = 'x-streamcore-cluster-via';
/** Headers a forwarded request keeps (the answering node checks the same credentials). */
const FORWARDED = ['authorization', 'content-type', 'accept'];

export interface ForwardDeps {
  me: string;
  /** This node's own API base URL (asked for its own part of the list). */
  selfAddress: () => string;
  snapshot: () => ClusterSnapshot;
  /** A picture read after `mark` (`ClusterView.pictureAfter`), for a process this node's picture does not show yet. */
  pictureAfter: (mark: number) => Promise<ClusterSnapshot>;
  /** `ClusterView.readsStarted`: when a create was answered, to know which picture shows it. */
  readsStarted: () => number;
  /** `cluster.reference_placement`. */
  references: ReferencePlacement;
  fetch: typeof fetch;
  logger: Logger;
}

/**
 * Any node answers the whole process API (docs/cluster.md#one-api-on-every-node): a request for
 * one process goes to the node that runs it, a new process to the node placement picks, and the
 * list is gathered from every node. The process answers (`GET /process`, `GET /process/:id`) carry
 * `core_id`, the node that answered for the process. Requests are forwarded after
 * authentication, with the client's credentials (nodes share their API credentials).
 */
export function registerForwarding(server: FastifyInstance, deps: ForwardDeps): void {
  const recent = new RecentPlacements();
  server.addHook('preHandler', async (request, reply) => {
    if (request.headers[HOP_HEADER] !== undefined) return;
    const route = request.routeOptions.url;
    if (route === undefined || !route.startsWith('/api/v3/process')) return;
    const arrivedAt = deps.readsStarted();
    const snapshot = deps.snapshot();
    if (route === '/api/v3/process') {
      if (request.method === 'GET') return answerList(request, reply, snapshot, deps);
      if (request.method !== 'POST') return;
      const id = bodyId(request.body);
      const owner = ownerOf(snapshot, id) ?? (id === undefined ? undefined : recent.nodeOf(snapshot, id));
      // The leader places new processes: it counts every create, wherever it came in.
      const leader = snapshot.leader;
      const toLeader = leader !== undefined && leader !== deps.me && snapshot.nodes.has(leader);
      if (owner === undefined && toLeader && request.headers[VIA_HEADER] === undefined)
        return relay(request, reply, snapshot, leader, deps, { via: true });
      const target = owner ?? placeCreate(snapshot, recent, request.body, deps.references);
      if (target === undefined) return;
      // Counted at once, so that the creates placed before etcd is read again (a burst) see it.
      const counted = owner === undefined && id !== undefined;
      if (counted) recent.add(id, target, placingOfConfig(request.body));
      const answered = await relay(request, reply, snapshot, target, deps).catch((error: unknown) => {
        if (counted) recent.answered(id, false, deps.readsStarted());
        throw error;
      });
      if (counted) recent.answered(id, reply.statusCode === 200, deps.readsStarted());
      return answered;
    }
    const id = (request.params as { id?: unknown }).id;
    if (typeof id !== 'string') return;
    let picture = snapshot;
    // Not in this node's picture (created or moved through another node since its last read):
    // a picture read since the request arrived decides, so every node gives one answer.
    if (ownerOf(picture, id) === undefined)
      picture = await deps.pictureAfter(arrivedAt).catch(() => snapshot);
    const owner = ownerOf(picture, id) ?? deps.me;
    const withCoreId = request.method === 'GET' && route === '/api/v3/process/:id';
    if (owner === deps.me && !withCoreId) return;
    return relay(request, reply, picture, owner, deps, { withCoreId });
  });
}

/** The node that runs `id` now: while a move is under way, the node it leaves. */
function ownerOf(snapshot: ClusterSnapshot, id: string | undefined): string | undefined {
  const assignment = id === undefined ? undefined : snapshot.assignments.get(id)?.value;
  return assignment?.after ?? assignment?.node;
}

function bodyId(body: unknown): string | undefined {
  const id = (body as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

async function relay(
  request: FastifyRequest,
  reply: FastifyReply,
  snapshot: ClusterSnapshot,
  node: string,
  deps: ForwardDeps,
  how: { withCoreId?: boolean; via?: boolean } = {},
): Promise<FastifyReply> {
  const answer = await ask(request, snapshot, node, deps, how.via === true);
  const withCoreId = how.withCoreId === true;
  const type = answer.headers.get('content-type') ?? 'application/json; charset=utf-8';
  const body = Buffer.from(await answer.arrayBuffer());
  if (withCoreId && answer.status === 200) {
    const process = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    return reply
      .code(200)
      .header('content-type', type)
      .send(JSON.stringify({ ...process, core_id: node }));
  }
  return reply.code(answer.status).header('content-type', type).send(body);
}

async function answerList(
  request: FastifyRequest,
  reply: FastifyReply,
  snapshot: ClusterSnapshot,
  deps: ForwardDeps,
): Promise<FastifyReply> {
  const nodes = [...snapshot.nodes.keys()];
  if (!nodes.includes(deps.me)) nodes.push(deps.me);
  const lists = await Promise.all(
    nodes.map(async (node) => {
      try {
        const answer = await ask(request, snapshot, node, deps);
        if (answer.status !== 200) return { node, failed: answer };
        const list = (await answer.json()) as Record<string, unknown>[];
        return { node, list: list.map((process) => ({ ...process, core_id: node })) };
      } catch (error) {
        deps.logger.warn({ err: error, node }, 'cluster: a node did not answer for its processes');
        return { node, list: [] };
      }
    }),
  );
  // An answer the client must see (a bad query: every node says the same).
  const failed = lists.find((part) => part.failed !== undefined)?.failed;
  if (failed !== undefined)
    return reply
      .code(failed.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send(Buffer.from(await failed.arrayBuffer()));
  const all: Record<string, unknown>[] = lists.flatMap((part) => part.list ?? []);
  all.sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0));
  return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(all));
}

/** The same request, asked of `node` with the hop header. */
async function ask(
  request: FastifyRequest,
  snapshot: ClusterSnapshot,
  node: string,
  deps: ForwardDeps,
  /** Passed to the leader for placement: answered by whatever node it places the process on. */
  via = false,
): Promise<Response> {
  const address = node === deps.me ? deps.selfAddress() : snapshot.nodes.get(node)?.address;
  if (address === undefined)
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      `node "${node}" that runs this process is not in the cluster now; its processes move to another node within the lease time`,
      { message: 'Cluster node unavailable', headers: { 'retry-after': '5' } },
    );
  const headers: Record<string, string> = via
    ? { [VIA_HEADER]: '1', 'accept-encoding': 'identity' }
    : { [HOP_HEADER]: '1', 'accept-encoding': 'identity' };
  for (const name of FORWARDED) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const hasBody = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD';
  if (hasBody) headers['content-type'] = 'application/json';
  return peerFetch(
    deps.fetch,
    address + request.url,
    { method: request.method, headers, body: hasBody ? JSON.stringify(request.body) : undefined },
    `node "${node}"`,
  ).catch((error: unknown) => {
    deps.logger.warn({ err: error, node }, 'cluster: forwarding a request failed');
    throw error;
  });
}
