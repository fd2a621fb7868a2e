import type { Logger } from 'pino';
import { candidatesOf, placingOf } from './candidates.js';
import type { EtcdClient, EtcdCompare, EtcdOp } from './etcd-client.js';
import { keys, type Assignment } from './keys.js';
import { count, placeProcess, type ReferencePlacement } from './placement.js';
import { companionNode, ProcessGroups } from './process-links.js';
import { atRest, rebalanceMoves } from './rebalance.js';
import type { ClusterSnapshot } from './view.js';

/** etcd takes at most 128 operations per transaction by default; moves go in batches below it. */
const BATCH = 40;

/**
 * Takes the leadership when nobody holds it; the key lives under this node's lease. Answers
 * whether this node leads now.
 */
export async function elect(
  snapshot: ClusterSnapshot,
  etcd: EtcdClient,
  me: string,
  lease: string,
): Promise<boolean> {
  if (snapshot.leader !== undefined) return snapshot.leader === me;
  const { succeeded } = await etcd.txn(
    [{ key: keys.leader, target: 'CREATE', createRevision: 0 }],
    [{ put: { key: keys.leader, value: JSON.stringify(me), lease } }],
  );
  return succeeded;
}

/** What the leader may do on this picture besides placing and moving off dead or drained nodes. */
export interface LeadRules {
  /**
   * False for a lease time after this node got etcd back: a node cut off with it may have kept
   * its encoders while every node said etcd was gone (quorum-check.ts), and stops them within
   * that time once this node answers that etcd is back.
   */
  mayMoveFromDead: boolean;
  /** `cluster.reference_placement`. */
  references: ReferencePlacement;
  /** Up to this many rebalancing moves when the cluster is at rest (0: none now). */
  rebalance: number;
  /** The nodes rebalancing may give processes to. */
  receivers: ReadonlySet<string>;
}

/**
 * The leader's work on one picture of the cluster (docs/cluster.md#moves-and-fencing):
 * - a process whose node is gone (its lease expired, so its encoders were fenced off) is given to
 *   the best other node at once;
 * - a process on a drained node is given to another node with `after` set: the new node waits
 *   until the drained one has stopped it;
 * - a move whose old node is gone is released;
 * - a process without a node gets one;
 * - when none of that is to do and no move is under way, a few processes move from the most
 *   loaded nodes to the least loaded (rebalance.ts), with `after` as for a drain.
 * A process goes where its companions (process-links.ts) run or go, when that node may take it.
 * Each write holds only while this node is the leader and the nodes and assignments are as read.
 * Answers how many processes it moved, and how many of them to rebalance.
 */
export async function leadOnce(
  snapshot: ClusterSnapshot,
  etcd: EtcdClient,
  me: string,
  logger: Logger,
  rules: LeadRules,
): Promise<{ moved: number; rebalanced: number }> {
  const writes = planWrites(snapshot, rules);
  const moved = await writeAll(writes, etcd, me, logger);
  const rebalancing = writes.filter((write) => write.why === REBALANCING).length;
  return { moved, rebalanced: moved > 0 ? rebalancing : 0 };
}

const REBALANCING = 'rebalancing';

/** One assignment the leader writes, with the compares it holds under and why (for the log). */
interface AssignmentWrite {
  compare: EtcdCompare[];
  op: EtcdOp;
  id: string;
  to: string;
  why: string;
}

function planWrites(snapshot: ClusterSnapshot, rules: LeadRules): AssignmentWrite[] {
  const alive = (node: string): boolean => snapshot.nodes.has(node);
  const candidates = candidatesOf(snapshot);
  const groups = new ProcessGroups(snapshot);
  const placed = new Map<string, string>();
  const writes: AssignmentWrite[] = [];
  const assign = (id: string, next: Assignment, compare: EtcdCompare[], why: string): void => {
    writes.push({
      id,
      to: next.node,
      why,
      compare,
      op: { put: { key: keys.assign(id), value: JSON.stringify(next) } },
    });
  };
  const place = (id: string, leaving: string | undefined): string | undefined => {
    const placing = placingOf(snapshot, id);
    const usable = (node: string): boolean => node !== leaving && candidates.has(node);
    const nodeOf = (other: string): string | undefined =>
      placed.get(other) ?? snapshot.assignments.get(other)?.value.node;
    const pool = [...candidates.values()].filter((candidate) => candidate.node.id !== leaving);
    const target = companionNode(groups, id, nodeOf, usable) ?? placeProcess(pool, placing, rules.references);
    const chosen = target === undefined ? undefined : candidates.get(target);
    if (target !== undefined && chosen !== undefined) {
      placed.set(id, target);
      count(chosen, placing);
      const left = leaving === undefined ? undefined : candidates.get(leaving);
      if (left !== undefined) count(left, placing, -1);
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
      if (rules.mayMoveFromDead)
        assign(id, { node: value.node }, [same, gone(value.after)], 'its old node is gone');
    } else if (!alive(value.node)) {
      if (!rules.mayMoveFromDead) continue;
      const target = place(id, value.node);
      if (target !== undefined) assign(id, { node: target }, [same, gone(value.node)], 'its node is gone');
    } else if (value.after === undefined && snapshot.nodeStates.get(value.node) === 'maintenance') {
      const target = place(id, value.node);
      if (target !== undefined)
        assign(id, { node: target, after: value.node }, [same], 'its node is drained');
    }
  }
  for (const id of snapshot.processes.keys()) {
    if (snapshot.assignments.has(id)) continue;
    const target = place(id, undefined);
    if (target !== undefined)
      assign(
        id,
        { node: target },
        [{ key: keys.assign(id), target: 'CREATE', createRevision: 0 }],
        'it had none',
      );
  }
  if (writes.length === 0 && rules.rebalance > 0 && atRest(snapshot)) {
    const moves = rebalanceMoves(
      snapshot,
      candidates,
      groups,
      rules.references,
      rules.rebalance,
      rules.receivers,
    );
    for (const move of moves) {
      const { modRevision } = snapshot.assignments.get(move.id) as { modRevision: number };
      const same: EtcdCompare = { key: keys.assign(move.id), target: 'MOD', modRevision };
      assign(move.id, { node: move.to, after: move.from }, [same], REBALANCING);
    }
  }
  return writes;
}

/** Writes in batches, each holding only while this node leads; answers how many were written. */
async function writeAll(
  writes: AssignmentWrite[],
  etcd: EtcdClient,
  me: string,
  logger: Logger,
): Promise<number> {
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
    for (const write of batch)
      logger.info({ process: write.id, to: write.to, why: write.why }, 'cluster: process assigned');
  }
  return moved;
}
