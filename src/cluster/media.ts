import type { FastifyInstance } from 'fastify';
import { HOP_HEADER } from './forward.js';
import type { ClusterSnapshot } from './view.js';

/** The mounts a process writes into: memfs, and the disk (served at the root). */
const MOUNT_ROUTES = new Set(['/memfs/*', '/*']);
const PEER_TIMEOUT_MS = 1000;

export interface MediaDeps {
  me: string;
  snapshot: () => ClusterSnapshot;
  fetch: typeof fetch;
}

/**
 * Media from any node (docs/cluster.md#media-from-any-node): a `GET`/`HEAD` of a memfs or disk
 * file this node does not have is redirected (307) to a node that has it, found by asking the
 * others with `HEAD`. A redirect rather than a proxy: the player then reads the segments from the
 * node that writes them, where its session is counted, and this node carries no media.
 */
export function registerMediaRedirects(server: FastifyInstance, deps: MediaDeps): void {
  server.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 404 || (request.method !== 'GET' && request.method !== 'HEAD')) return payload;
    if (request.headers[HOP_HEADER] !== undefined) return payload;
    const route = request.routeOptions.url;
    if (route === undefined || !MOUNT_ROUTES.has(route)) return payload;
    const peers = [...deps.snapshot().nodes.values()].filter((node) => node.id !== deps.me);
    const holder = await firstHolder(peers, request.url, deps.fetch);
    if (holder === undefined) return payload;
    void reply
      .code(307)
      .header('location', holder + request.url)
      .header('cache-control', 'no-store');
    return '';
  });
}

async function firstHolder(
  peers: readonly { address: string }[],
  url: string,
  fetchFn: typeof fetch,
): Promise<string | undefined> {
  if (peers.length === 0) return undefined;
  return Promise.any(
    peers.map(async (peer) => {
      const response = await fetchFn(peer.address + url, {
        method: 'HEAD',
        headers: { [HOP_HEADER]: '1' },
        signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
      });
      if (response.status !== 200) throw new Error('not there');
      return peer.address;
    }),
  ).catch(() => undefined);
}
