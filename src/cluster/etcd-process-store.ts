import type { Logger } from 'pino';
import { ApiError } from '../http/index.js';
import {
  configToPlain,
  type DbChange,
  type LoadedProcess,
  type ProcessRecord,
  type ProcessRecords,
  type ProcessStoreBackend,
} from '../process/index.js';
import { EtcdUnavailable, type EtcdClient, type EtcdCompare, type EtcdOp } from './etcd-client.js';
import { keys, type ProcessDocument } from './keys.js';
import type { ClusterView, Versioned } from './view.js';

/** What the store needs to know about this node's membership. */
export interface Membership {
  readonly nodeId: string;
  /** The create revision of this node's registration under its current lease; 0 when it has none. */
  registration(): number;
}

/** The JSON of an assignment to `node` that has settled (no move under way). */
export function settledAssignment(node: string): string {
  return JSON.stringify({ node });
}

/** The config as the API answers it (readable by `readProcessConfig`), with its times, order and metadata. */
export function processDocument(record: ProcessRecord): ProcessDocument {
  return {
    id: record.config.id,
    reference: record.config.reference,
    config: configToPlain(record.config),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    order: record.order,
    metadata: record.metadata,
  };
}

/**
 * The process service's store in a cluster (docs/cluster.md#keys): every change is one etcd
 * transaction that holds only if this node still has its lease, still is the process's node,
 * and the process is as this node last wrote or adopted it (compare-and-set on its revision).
 * A change that does not hold, or that etcd cannot take, is undone and answered 503 (or 400 for
 * an id another node already has). Nothing is loaded at start: processes come by adoption.
 */
export class EtcdProcessStore implements ProcessStoreBackend {
  /** The revision of each process key as this node last wrote or adopted it. */
  private readonly revisions = new Map<string, number>();
  /** Processes with a write under way: the reconciler leaves them alone. */
  readonly pending = new Set<string>();
  /** The revision of this node's last write; older snapshots do not show it yet. */
  lastWriteRevision = 0;

  constructor(
    private readonly etcd: EtcdClient,
    private readonly view: ClusterView,
    private readonly membership: Membership,
    private readonly records: ProcessRecords,
    private readonly logger: Logger,
  ) {}

  /** This node took over `id` as etcd holds it at `modRevision`. */
  adopted(id: string, modRevision: number): void {
    this.revisions.set(id, modRevision);
  }

  /**
   * etcd holds `id` at another revision than this node last wrote: a write whose answer was lost
   * (etcd took it after the call timed out) or one this node did not make. When etcd holds what
   * this node has, the revision is taken over; otherwise the caller adopts etcd's version.
   */
  matches(id: string, stored: Versioned<ProcessDocument>): boolean {
    if (this.revisions.get(id) === stored.modRevision) return true;
    const record = this.records.one(id);
    if (record === undefined || JSON.stringify(processDocument(record)) !== JSON.stringify(stored.value))
      return false;
    this.revisions.set(id, stored.modRevision);
    return true;
  }

  /** This node let go of `id`. */
  forgotten(id: string): void {
    this.revisions.delete(id);
  }

  load(): Promise<LoadedProcess[]> {
    return Promise.resolve([]);
  }

  settle(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  release(): () => void {
    return () => undefined;
  }

  systemMetadata(): Record<string, unknown> {
    return this.view.snapshot.system?.value ?? {};
  }

  async replaceSystemMetadata(next: Record<string, unknown>): Promise<void> {
    const known = this.view.snapshot.system?.modRevision ?? 0;
    const result = await this.transact(
      [{ key: keys.system, target: 'MOD', modRevision: known }],
      [{ put: { key: keys.system, value: JSON.stringify(next) } }],
    );
    if (!result.succeeded) throw conflict('the server metadata changed on another node; read it again');
    this.view.snapshot.system = { value: next, modRevision: result.revision };
  }

  async save(change: DbChange = {}, undo: () => void = () => undefined): Promise<void> {
    const me = this.membership.nodeId;
    const ids = new Set([...(change.ids ?? []), ...(change.entries ?? [])]);
    if (change.metadataKey !== undefined) ids.add(change.metadataKey.id);
    if (change.system === true) {
      // The single-node journal writes the server metadata with processes; here it has its own call.
      await this.replaceSystemMetadata(this.systemMetadata());
    }
    if (ids.size === 0) return;
    const registration = this.membership.registration();
    if (registration === 0) {
      undo();
      throw unavailable('this node has no lease in the cluster right now');
    }
    const compare: EtcdCompare[] = [{ key: keys.node(me), target: 'CREATE', createRevision: registration }];
    const success: EtcdOp[] = [];
    const created: string[] = [];
    const written: string[] = [];
    const deleted: string[] = [];
    for (const id of ids) {
      const record = this.records.one(id);
      const known = this.revisions.get(id);
      if (known !== undefined) {
        compare.push({ key: keys.process(id), target: 'MOD', modRevision: known });
        compare.push({ key: keys.assign(id), target: 'VALUE', value: settledAssignment(me) });
      }
      if (record === undefined) {
        if (known === undefined) continue;
        success.push({ delete: { key: keys.process(id) } }, { delete: { key: keys.assign(id) } });
        deleted.push(id);
        continue;
      }
      success.push({ put: { key: keys.process(id), value: JSON.stringify(processDocument(record)) } });
      if (known === undefined) {
        compare.push({ key: keys.process(id), target: 'CREATE', createRevision: 0 });
        success.push({ put: { key: keys.assign(id), value: settledAssignment(me) } });
        created.push(id);
      }
      written.push(id);
    }
    for (const id of ids) this.pending.add(id);
    try {
      const result = await this.transact(compare, success).catch((error: unknown) => {
        undo();
        throw error;
      });
      if (!result.succeeded) {
        undo();
        const taken = created.find((id) => this.view.snapshot.processes.has(id));
        if (taken !== undefined)
          throw new ApiError('BAD_REQUEST', [`id: a process with id "${taken}" already exists`], {
            message: 'Invalid process config',
          });
        throw unavailable(
          'the process moved to another node or this node lost its lease while the change was made; retry',
        );
      }
      for (const id of written) this.revisions.set(id, result.revision);
      for (const id of deleted) this.revisions.delete(id);
      this.lastWriteRevision = Math.max(this.lastWriteRevision, result.revision);
    } finally {
      for (const id of ids) this.pending.delete(id);
    }
  }

  private async transact(compare: EtcdCompare[], success: EtcdOp[]) {
    try {
      return await this.etcd.txn(compare, success);
    } catch (error) {
      if (!(error instanceof EtcdUnavailable)) throw error;
      this.logger.warn({ err: error }, 'cluster: etcd cannot take a change');
      throw unavailable(
        'etcd has no quorum or cannot be reached: the cluster takes no changes until it is back; running processes go on',
      );
    }
  }
}

function unavailable(detail: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', detail, { message: 'Cluster unavailable' });
}

function conflict(detail: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', detail, { message: 'Cluster changed' });
}
