import { placingOf } from './candidates.js';
import { count, hasRoom, loadOf, type Candidate, type ReferencePlacement } from './placement.js';
import type { ProcessGroups } from './process-links.js';
import type { ClusterSnapshot } from './view.js';

/** One process the leader moves from a loaded node to one with room. */
export interface RebalanceMove {
  id: string;
  from: string;
  to: string;
}

/** Tolerance of the load comparison (loads are fractions of processes per CPU). */
const EPSILON = 1e-9;

/**
 * Whether the cluster is at rest, the only time it is rebalanced: every process is assigned to a
 * registered node and no move is under way (so at most one wave of moves runs at a time, and a
 * node's death or drain is dealt with first).
 */
export function atRest(snapshot: ClusterSnapshot): boolean {
  for (const id of snapshot.processes.keys()) if (!snapshot.assignments.has(id)) return false;
  for (const { value } of snapshot.assignments.values())
    if (value.after !== undefined || !snapshot.nodes.has(value.node)) return false;
  return true;
}

/**
 * Up to `limit` moves that even out the processes per CPU (docs/cluster.md#rebalancing): each
 * from the most loaded node that has a movable process to the least loaded one that has room for
 * it, and only when, after the move, the receiving node is not more loaded than the one it
 * relieved. Every move lowers the sum of the squared loads, so repeated rounds end, and a
 * difference of one process (on nodes of equal CPUs) is left alone: no process moves back and
 * forth. Movable: no companion (processes linked by output references stay together), and the
 * move keeps the reference rule (`spread`: the new node has fewer of its reference than the old;
 * `together`: not fewer but one). Stopped
 * processes go first (nothing is interrupted), then the most recently created.
 */
export function rebalanceMoves(
  snapshot: ClusterSnapshot,
  candidates: Map<string, Candidate>,
  groups: ProcessGroups,
  rule: ReferencePlacement,
  limit: number,
  /** The nodes that may receive processes (NodeTenure: those registered for a while); all when undefined. */
  receivers?: ReadonlySet<string>,
): RebalanceMove[] {
  const moves: RebalanceMove[] = [];
  const moved = new Set<string>();
  while (moves.length < limit) {
    const move = nextMove(snapshot, candidates, groups, rule, moved, receivers);
    if (move === undefined) break;
    moves.push(move);
    moved.add(move.id);
    const placing = placingOf(snapshot, move.id);
    count(candidates.get(move.to) as Candidate, placing);
    count(candidates.get(move.from) as Candidate, placing, -1);
  }
  return moves;
}

function nextMove(
  snapshot: ClusterSnapshot,
  candidates: Map<string, Candidate>,
  groups: ProcessGroups,
  rule: ReferencePlacement,
  moved: Set<string>,
  receivers: ReadonlySet<string> | undefined,
): RebalanceMove | undefined {
  const byLoad = [...candidates.values()].sort(
    (a, b) => loadOf(a) - loadOf(b) || (a.node.id < b.node.id ? -1 : 1),
  );
  for (const from of [...byLoad].reverse()) {
    for (const to of byLoad) {
      if (to === from) break;
      if (receivers !== undefined && !receivers.has(to.node.id)) continue;
      const after = loadOf(to) + 1 / Math.max(1, to.node.resources.ncpu);
      const relieved = loadOf(from) - 1 / Math.max(1, from.node.resources.ncpu);
      if (after > relieved + EPSILON) continue;
      const id = movable(snapshot, from, to, groups, rule, moved);
      if (id !== undefined) return { id, from: from.node.id, to: to.node.id };
    }
  }
  return undefined;
}

function movable(
  snapshot: ClusterSnapshot,
  from: Candidate,
  to: Candidate,
  groups: ProcessGroups,
  rule: ReferencePlacement,
  moved: Set<string>,
): string | undefined {
  let best: { id: string; running: boolean; createdAt: number } | undefined;
  for (const [id, { value }] of snapshot.assignments) {
    if (value.node !== from.node.id || moved.has(id) || groups.companions(id).length > 0) continue;
    const placing = placingOf(snapshot, id);
    if (!hasRoom(to, placing) || !keepsReferenceRule(placing.reference, from, to, rule)) continue;
    const stored = snapshot.processes.get(id)?.value;
    const next = { id, running: stored?.order === 'start', createdAt: stored?.created_at ?? 0 };
    const better =
      best === undefined ||
      (next.running !== best.running
        ? !next.running
        : next.createdAt !== best.createdAt
          ? next.createdAt > best.createdAt
          : next.id < best.id);
    if (better) best = next;
  }
  return best?.id;
}

function keepsReferenceRule(
  reference: string,
  from: Candidate,
  to: Candidate,
  rule: ReferencePlacement,
): boolean {
  if (rule === 'load' || reference === '') return true;
  const there = to.references.get(reference) ?? 0;
  const here = from.references.get(reference) ?? 0;
  // spread: the new node ends with no more of it than the old one had; together: nor with fewer.
  return rule === 'spread' ? there < here : there >= here - 1;
}
