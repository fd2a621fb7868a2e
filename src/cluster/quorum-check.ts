import type { Logger } from 'pino';
import type { EtcdClient } from './etcd-client.js';
import { keys } from './keys.js';

/** The route a node asks its peers on when it cannot reach etcd (no credentials: it tells only yes or no). */
export const ETCD_PROBE_PATH = '/cluster/etcd-probe';
const PEER_TIMEOUT_MS = 3000;

/**
 * Whether etcd answers this node now: a linearizable read (which needs a quorum), started after
 * the question arrived. Concurrent questions share a probe that started after they arrived.
 */
export class EtcdProbe {
  private last: { startedAt: number; result: Promise<boolean> } | undefined;

  constructor(
    private readonly etcd: EtcdClient,
    private readonly monotonic: () => number,
  ) {}

  reachable(arrivedAt: number): Promise<boolean> {
    if (this.last !== undefined && this.last.startedAt >= arrivedAt) return this.last.result;
    const startedAt = this.monotonic();
    const result = this.etcd.range(keys.leader).then(
      () => true,
      () => false,
    );
    this.last = { startedAt, result };
    return result;
  }
}

/**
 * When this node cannot renew its lease, it may keep its encoders only if etcd has lost its
 * quorum for everyone (docs/cluster.md#when-etcd-is-in-trouble): every peer it knows must say
 * that it cannot reach etcd either, each by a probe started after the question was sent. Then no
 * node can move anything until etcd is back, and a node that gets etcd back waits a lease time
 * before it moves the processes of a node whose lease expired (the leader's rule in leader.ts),
 * time in which this node either renews or hears "reachable" from that node and stops.
 */
export async function everyPeerLostEtcd(
  peers: readonly { id: string; address: string }[],
  fetchFn: typeof fetch,
  logger: Logger,
): Promise<boolean> {
  const answers = await Promise.all(
    peers.map(async (peer) => {
      try {
        const response = await fetchFn(peer.address + ETCD_PROBE_PATH, {
          signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
        });
        const body = (await response.json()) as { etcd?: unknown };
        return body.etcd === 'unreachable';
      } catch {
        // A peer that cannot be asked might reach etcd and lead: this node must not count on it.
        return false;
      }
    }),
  );
  const all = answers.every(Boolean);
  if (all && peers.length > 0)
    logger.debug({ peers: peers.map((peer) => peer.id) }, 'cluster: no node reaches etcd; encoders go on');
  return all;
}
