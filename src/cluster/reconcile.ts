import type { Logger } from 'pino';
import { readProcessConfig, type ProcessRecord, type ProcessService } from '../process/index.js';
import type { EtcdClient } from './etcd-client.js';
import type { EtcdProcessStore } from './etcd-process-store.js';
import { keys, type Assignment, type ProcessDocument } from './keys.js';
import { linkedIds } from './process-links.js';
import type { ClusterSnapshot, Versioned } from './view.js';

/**
 * Makes this node run what etcd assigns it and nothing else (docs/cluster.md#moves-and-fencing): a process
 * assigned elsewhere is stopped and forgotten (and, when it was leaving this node, the move is
 * released so that the new node may start it); a process assigned here is adopted as stored.
 * Runs only while this node's fence holds.
 */
export async function reconcile(
  snapshot: ClusterSnapshot,
  deps: {
    me: string;
    service: ProcessService;
    store: EtcdProcessStore;
    etcd: EtcdClient;
    logger: Logger;
    /** Checked before each adoption: the fence may close while this runs. */
    mayRun: () => boolean;
  },
): Promise<void> {
  const { me, service, store, etcd, logger } = deps;
  // A picture older than this node's own last write does not show it yet.
  if (snapshot.revision < store.lastWriteRevision) return;
  const local = new Set(service.ids());
  for (const id of local) {
    if (store.pending.has(id)) continue;
    const assignment = snapshot.assignments.get(id)?.value;
    if (assignment?.node === me && assignment.after === undefined) {
      const stored = snapshot.processes.get(id);
      if (stored === undefined || store.matches(id, stored)) continue;
      // etcd is the store of record: its version replaces this node's.
      const record = recordOf(stored.value);
      if (record === undefined) continue;
      logger.warn({ process: id }, 'cluster: etcd holds another version of a process; taking it');
      store.adopted(id, stored.modRevision);
      await service.adopt(record);
      continue;
    }
    await service.detach(id);
    store.forgotten(id);
    logger.info({ process: id, to: assignment?.node }, 'cluster: process left this node');
  }
  for (const [id, { value: assignment, modRevision }] of inAdoptionOrder(snapshot)) {
    if (assignment.after === me && !local.has(id)) {
      // This node let go of it (or never had it since its restart): the new node may start it.
      await etcd
        .txn(
          [{ key: keys.assign(id), target: 'MOD', modRevision }],
          [{ put: { key: keys.assign(id), value: JSON.stringify({ node: assignment.node }) } }],
        )
        .catch((error: unknown) =>
          logger.warn({ err: error, process: id }, 'cluster: releasing a move failed'),
        );
      continue;
    }
    if (assignment.node !== me || assignment.after !== undefined) continue;
    if (local.has(id) || store.pending.has(id)) continue;
    const stored = snapshot.processes.get(id);
    if (stored === undefined) continue;
    const record = recordOf(stored.value);
    if (record === undefined) {
      logger.error({ process: id }, 'cluster: stored process does not read; not started');
      continue;
    }
    if (!deps.mayRun()) return;
    store.adopted(id, stored.modRevision);
    await service.adopt(record).catch((error: unknown) => {
      store.forgotten(id);
      logger.error({ err: error, process: id }, 'cluster: adopting a process failed');
    });
  }
}

/**
 * The assignments, those of processes that read another process's output last: the encoder
 * follows such an input through the other process's config, which must be here first.
 */
function inAdoptionOrder(snapshot: ClusterSnapshot): [string, Versioned<Assignment>][] {
  const all = [...snapshot.assignments];
  const reads = ([id]: [string, unknown]): boolean =>
    linkedIds(snapshot.processes.get(id)?.value.config).length > 0;
  return [...all.filter((entry) => !reads(entry)), ...all.filter(reads)];
}

function recordOf(document: ProcessDocument): ProcessRecord | undefined {
  const { config } = readProcessConfig(document.config);
  if (config === undefined) return undefined;
  return {
    config,
    createdAt: document.created_at,
    updatedAt: document.updated_at,
    order: document.order === 'start' ? 'start' : 'stop',
    metadata: document.metadata ?? {},
  };
}
