import type { Logger } from 'pino';
import { candidatesOf, cpuLimitOf } from './candidates.js';
import type { EtcdClient, EtcdCompare, EtcdOp } from './etcd-client.js';
import { keys, type Assignment } from './keys.js';
import { placeProcess } from './placement.js';
import type { ClusterSnapshot } from './view.js';

/** etcd takes at most 128 operations per transaction by default; moves go in batches below it. */
const BATCH = 40;

/** Takes the leadership when nobody holds it; the key lives under this node's lease. */
export async function elect(
  snapshot: ClusterSnapshot,
  etcd: EtcdClient,
  me: string,
  lease: string,
): Promise<void> {
  if (snapshot.leader !== undefined) return;
  await etcd.txn(
    [{ key: keys.leader, target: 'CREATE', createRevision: 0 }],
    [{ put: { key: keys.leader, value: JSON.stringify(me), lease } }],
  );
}

/**
 * The leader's work on one picture of the cluster (docs/cluster.md#moves-and-fencing):
 * - a process whose node is gone (its lease expired, so its encoders were fenced off) is given to
 *   the best other node at once;
 * - a process on a drained node is given to another node with `after` set: the new node waits
 *   until the drained one has stopped it;
 * - a move whose old node is gone is released;
 * - a process without a node gets one.
 * Each write holds only while this node is the leader and the nodes and assignments are as read.
 */
export async function leadOnce(
  snapshot: ClusterSnapshot,
  etcd: EtcdClient,
  me: string,
  logger: Logger,
  /**
   * False for a lease time after this node got etcd back: a node cut off with it may have kept
   * its encoders while every node said etcd was gone (quorum-check.ts), and stops them within
   * that time once this node answers that etcd is back.
   */
  mayMoveFromDead: boolean,
): Promise<number> {
  const alive = (node: string): boolean => snapshot.nodes.has(node);
  const candidates = candidatesOf(snapshot);
  const writes: { compare: EtcdCompare[]; op: EtcdOp; id: string; to: string }[] = [];
  const assign = (id: string, next: Assignment, compare: EtcdCompare[]): void => {
    writes.push({
      id,
      to: next.node,
      compare,
      op: { put: { key: keys.assign(id), value: JSON.stringify(next) } },
    });
  };
  const place = (id: string, leaving: string | undefined): string | undefined => {
    const pool = [...candidates.values()].filter((candidate) => candidate.node.id !== leaving);
    const target = placeProcess(pool, cpuLimitOf(snapshot, id));
    const chosen = target === undefined ? undefined : candidates.get(target);
    if (chosen !== undefined) {
      chosen.processes++;
      chosen.cpuReserved += cpuLimitOf(snapshot, id);
      const left = leaving === undefined ? undefined : candidates.get(leaving);
      if (left !== undefined) left.processes--;
    }
    return target;
  };
  for (const [id, { value, modRevision }] of snapshot.assignments) {
    const same: EtcdCompare = { key: keys.assign(id), target: 'MOD', modRevision };
    const gone = (node: string): EtcdCompare => ({
      key: keys.node(node),
      target: 'CREATE',
      createRevision: 0,
    });
    if (value.after !== undefined && !alive(value.after)) {
      if (mayMoveFromDead) assign(id, { node: value.node }, [same, gone(value.after)]);
    } else if (!alive(value.node)) {
      if (!mayMoveFromDead) continue;
      const target = place(id, value.node);
      if (target !== undefined) assign(id, { node: target }, [same, gone(value.node)]);
    } else if (value.after === undefined && snapshot.nodeStates.get(value.node) === 'maintenance') {
      const target = place(id, value.node);
      if (target !== undefined) assign(id, { node: target, after: value.node }, [same]);
    }
  }
  for (const id of snapshot.processes.keys()) {
    if (snapshot.assignments.has(id)) continue;
    const target = place(id, undefined);
    if (target !== undefined)
      assign(id, { node: target }, [{ key: keys.assign(id), target: 'CREATE', createRevision: 0 }]);
  }
  const leading: EtcdCompare = { key: keys.leader, target: 'VALUE', value: JSON.stringify(me) };
  let moved = 0;
  for (let start = 0; start < writes.length; start += BATCH) {
    const batch = writes.slice(start, start + BATCH);
    const result = await etcd.txn(
      [leading, ...batch.flatMap((write) => write.compare)],
      batch.map((write) => write.op),
    );
    if (!result.succeeded) continue;
    moved += batch.length;
    for (const write of batch) logger.info({ process: write.id, to: write.to }, 'cluster: process assigned');
  }
  return moved;
}
