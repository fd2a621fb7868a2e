import { candidatesOf, placingOfConfig } from './candidates.js';
import { placeProcess, type ReferencePlacement } from './placement.js';
import { companionNode, ProcessGroups } from './process-links.js';
import type { RecentPlacements } from './recent-placements.js';
import type { ClusterSnapshot } from './view.js';

/**
 * The node a new process goes to (docs/cluster.md#placement): where a process it is linked with
 * by an output reference runs or was just placed, when that node may take processes; otherwise
 * by load and the reference rule, counting the creates placed since the picture was read.
 */
export function placeCreate(
  snapshot: ClusterSnapshot,
  recent: RecentPlacements,
  body: unknown,
  rule: ReferencePlacement,
): string | undefined {
  const candidates = recent.count(snapshot, candidatesOf(snapshot));
  const bodyId = (body as { id?: unknown } | undefined)?.id;
  // A create without an id gets one where it lands; '' is no process's id.
  const id = typeof bodyId === 'string' ? bodyId : '';
  const groups = new ProcessGroups(snapshot, { id, config: body });
  const nodeOf = (other: string): string | undefined =>
    snapshot.assignments.get(other)?.value.node ?? recent.nodeOf(snapshot, other);
  return (
    companionNode(groups, id, nodeOf, (node) => candidates.has(node)) ??
    placeProcess([...candidates.values()], placingOfConfig(body), rule)
  );
}
