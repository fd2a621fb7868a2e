import type { Logger } from 'pino';
import type { EtcdClient } from './etcd-client.js';
import type { Membership } from './etcd-process-store.js';
import type { Fence } from './fence.js';
import { keys, type NodeRecord, type NodeResources } from './keys.js';

export interface NodeSessionDeps {
  etcd: EtcdClient;
  fence: Fence;
  nodeId: string;
  /** This node's API base URL, known once it listens. */
  address: () => string;
  ttlSeconds: number;
  resources: () => NodeResources;
  /** Monotonic ms (the fence's deadlines) and wall-clock ms (what other nodes read). */
  monotonic: () => number;
  now: () => number;
  logger: Logger;
}

/**
 * This node's membership: a lease, its registration under that lease (with its resources), and
 * the renewals that move the fence's deadline. A lease etcd no longer knows is given up (the
 * caller stops everything) and a new one is taken at the next tick.
 */
export class NodeSession implements Membership {
  private lease: string | undefined;
  private createRevision = 0;
  private readonly startedAt: number;

  constructor(private readonly deps: NodeSessionDeps) {
    this.startedAt = deps.now();
  }

  get nodeId(): string {
    return this.deps.nodeId;
  }

  /** The lease, while this node holds one. */
  get currentLease(): string | undefined {
    return this.lease;
  }

  registration(): number {
    return this.deps.fence.mayRun() ? this.createRevision : 0;
  }

  /**
   * Renews the lease (or takes one) and writes the registration. Returns false when the lease
   * turned out to be gone; throws when etcd cannot be asked.
   */
  async tick(): Promise<boolean> {
    const { etcd, fence } = this.deps;
    const sentAt = this.deps.monotonic();
    if (this.lease === undefined) {
      const lease = await etcd.grant(this.deps.ttlSeconds);
      this.lease = lease;
      this.createRevision = 0;
      fence.renewed(sentAt);
      this.deps.logger.info({ node: this.deps.nodeId }, 'cluster: joined with a new lease');
    } else if (await etcd.keepAlive(this.lease)) {
      fence.renewed(sentAt);
    } else {
      this.deps.logger.warn({ node: this.deps.nodeId }, 'cluster: this node lost its lease');
      this.lease = undefined;
      this.createRevision = 0;
      fence.lost();
      return false;
    }
    await this.register(this.lease);
    return true;
  }

  async leave(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    this.createRevision = 0;
    if (lease !== undefined) await this.deps.etcd.revoke(lease).catch(() => undefined);
  }

  private async register(lease: string): Promise<void> {
    const record: NodeRecord = {
      id: this.deps.nodeId,
      address: this.deps.address(),
      updatedAt: this.deps.now(),
      startedAt: this.startedAt,
      resources: this.deps.resources(),
    };
    const key = keys.node(this.deps.nodeId);
    const result = await this.deps.etcd.txn(
      [],
      [{ put: { key, value: JSON.stringify(record), lease } }, { range: { key } }],
    );
    this.createRevision = result.ranges[0]?.[0]?.createRevision ?? 0;
  }
}
