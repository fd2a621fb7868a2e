import type { Logger } from 'pino';
import { readProcessConfig, type ProcessRecord, type ProcessService } from '../process/index.js';
import type { EtcdClient } from './etcd-client.js';
import type { EtcdProcessStore } from './etcd-process-store.js';
import { keys, type Assignment, type ProcessDocument } from './keys.js';
import { eachBounded } from './bounded.js';
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
  const { me, service, store, logger } = deps;
  // A picture older than this node's own last write does not show it yet.
  if (snapshot.revision < store.lastWriteRevision) return;
  const local = new Set(service.ids());
  const leaving: string[] = [];
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
    leaving.push(id);
  }
  await eachBounded(leaving, STARTS_AT_ONCE, async (id) => {
    await service.detach(id);
    store.forgotten(id);
    logger.info(
      { process: id, to: snapshot.assignments.get(id)?.value.node },
      'cluster: process left this node',
    );
  });
  const { releases, waves } = plan(snapshot, me, local, store.pending);
  await Promise.all([release(releases, deps), adopt(waves, snapshot, deps)]);
}

/**
 * How many processes this node takes over (or lets go of) at once. Each start waits on child
 * processes (the `mkfifo` of its `-vstats` FIFO, then the encoder's spawn): one at a time those
 * waits add up over a failover of many processes; 8 at a time overlap them and keep the burst of
 * encoder starts on the node bounded. On a busy 2-core machine the starts are bound by CPU, where
 * 1, 8 or 64 at a time ended within the noise (docs/cluster.md#figures).
 */
export const STARTS_AT_ONCE = 8;

interface Plan {
  /** Moves away from this node that it has let go of: the new node may start them. */
  releases: [string, Versioned<Assignment>][];
  /** The processes to adopt, in waves: each wave once the one before is in the table. */
  waves: string[][];
}

/**
 * What this node does with the assignments in `snapshot`. Processes that read another process's
 * output come in a later wave: the encoder follows such an input through the other process's
 * config, which must be here first.
 */
export function plan(
  snapshot: ClusterSnapshot,
  me: string,
  local: ReadonlySet<string>,
  pending: ReadonlySet<string>,
): Plan {
  const releases: Plan['releases'] = [];
  const independent: string[] = [];
  const readers: string[] = [];
  for (const [id, versioned] of snapshot.assignments) {
    const assignment = versioned.value;
    // This node let go of it (or never had it since its restart).
    if (assignment.after === me && !local.has(id)) releases.push([id, versioned]);
    if (assignment.node !== me || assignment.after !== undefined) continue;
    if (local.has(id) || pending.has(id)) continue;
    const stored = snapshot.processes.get(id);
    if (stored === undefined) continue;
    (linkedIds(stored.value.config).length > 0 ? readers : independent).push(id);
  }
  return { releases, waves: [independent, readers].filter((wave) => wave.length > 0) };
}

type Deps = Parameters<typeof reconcile>[1];

async function release(releases: Plan['releases'], { etcd, logger }: Deps): Promise<void> {
  for (const [id, { value: assignment, modRevision }] of releases) {
    await etcd
      .txn(
        [{ key: keys.assign(id), target: 'MOD', modRevision }],
        [{ put: { key: keys.assign(id), value: JSON.stringify({ node: assignment.node }) } }],
      )
      .catch((error: unknown) =>
        logger.warn({ err: error, process: id }, 'cluster: releasing a move failed'),
      );
  }
}

/** Adopts each wave, STARTS_AT_ONCE at a time, while the fence holds (checked before each one). */
async function adopt(waves: string[][], snapshot: ClusterSnapshot, deps: Deps): Promise<void> {
  const { service, store, logger } = deps;
  const count = waves.reduce((sum, wave) => sum + wave.length, 0);
  if (count > 0) logger.info({ processes: count }, 'cluster: taking over processes assigned to this node');
  for (const wave of waves) {
    if (!deps.mayRun()) return;
    await eachBounded(
      wave,
      STARTS_AT_ONCE,
      async (id) => {
        const stored = snapshot.processes.get(id) as Versioned<ProcessDocument>;
        const record = recordOf(stored.value);
        if (record === undefined) {
          logger.error({ process: id }, 'cluster: stored process does not read; not started');
          return;
        }
        store.adopted(id, stored.modRevision);
        await service.adopt(record).catch((error: unknown) => {
          store.forgotten(id);
          logger.error({ err: error, process: id }, 'cluster: adopting a process failed');
        });
      },
      deps.mayRun,
    );
  }
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
