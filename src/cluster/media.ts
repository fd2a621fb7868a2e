import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { HOP_HEADER } from './forward.js';
import type { ClusterSnapshot } from './view.js';

/** The mounts a process writes into: memfs, and the disk (served at the root). */
const MOUNT_ROUTES = new Set(['/memfs/*', '/*']);
const PEER_TIMEOUT_MS = 1000;
/** What a proxied answer keeps of the holder's headers. */
const PASSED_HEADERS = ['content-type', 'content-length', 'cache-control', 'last-modified', 'etag'];

export interface MediaDeps {
  me: string;
  /** `cluster.media`: how this node answers for a file another node has. */
  mode: Config['cluster']['media'];
  snapshot: () => ClusterSnapshot;
  fetch: typeof fetch;
}

/**
 * Media from any node (docs/cluster.md#media-from-any-node): a `GET`/`HEAD` of a memfs or disk
 * file this node does not have is asked of the other nodes at once (with the hop header, so that
 * they answer only for their own files). `redirect`: a 307 to the first node that has it; the
 * player then reads from the writer. `proxy`: this node passes the first holder's answer on, so
 * the player never leaves the node it asked (bench/cluster-hls.ts measures both).
 */
export function registerMediaFromPeers(server: FastifyInstance, deps: MediaDeps): void {
  server.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 404 || (request.method !== 'GET' && request.method !== 'HEAD')) return payload;
    if (request.headers[HOP_HEADER] !== undefined) return payload;
    const route = request.routeOptions.url;
    if (route === undefined || !MOUNT_ROUTES.has(route)) return payload;
    const peers = [...deps.snapshot().nodes.values()].filter((node) => node.id !== deps.me);
    const method = deps.mode === 'proxy' ? request.method : 'HEAD';
    const holder = await firstHolder(peers, request.url, method, deps.fetch);
    if (holder === undefined) return payload;
    if (deps.mode === 'redirect') {
      void reply
        .code(307)
        .header('location', holder.address + request.url)
        .header('cache-control', 'no-store');
      return '';
    }
    void reply.code(200).removeHeader('content-length');
    for (const name of PASSED_HEADERS) {
      const value = holder.response.headers.get(name);
      if (value !== null) void reply.header(name, value);
    }
    const body = holder.response.body;
    return body === null ? '' : Readable.fromWeb(body as WebReadableStream<Uint8Array>);
  });
}

interface Holder {
  address: string;
  response: Response;
}

/**
 * The first peer that answers 200 for `url`. The others' bodies are dropped as they come in (a
 * file may be on two nodes for a moment while its process moves).
 */
async function firstHolder(
  peers: readonly { address: string }[],
  url: string,
  method: string,
  fetchFn: typeof fetch,
): Promise<Holder | undefined> {
  if (peers.length === 0) return undefined;
  let won = false;
  return Promise.any(
    peers.map(async (peer) => {
      // The deadline is for the answer's headers only: a proxied body may take longer.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), PEER_TIMEOUT_MS);
      const response = await fetchFn(peer.address + url, {
        method,
        headers: { [HOP_HEADER]: '1', 'accept-encoding': 'identity' },
        signal: abort.signal,
      }).finally(() => clearTimeout(timer));
      if (response.status !== 200 || won) {
        await response.body?.cancel();
        throw new Error('not there');
      }
      won = true;
      return { address: peer.address, response };
    }),
  ).catch(() => undefined);
}
