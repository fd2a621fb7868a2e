import type { ClusterSnapshot } from './view.js';

/**
 * How long each node has been registered under its current lease, as this node has seen it.
 * Rebalancing gives processes only to a node that has stayed a while (docs/cluster.md#rebalancing):
 * a node that restarts over and over would otherwise take processes each time it comes back and
 * lose them again at its next death, interrupting them twice.
 */
export class NodeTenure {
  /** Per node: its registration's create revision, and the monotonic ms it was first seen at. */
  private readonly seen = new Map<string, { createRevision: number; since: number }>();

  constructor(private readonly monotonic: () => number) {}

  /** Notes the registrations of `snapshot`; answers the nodes registered for at least `ms`. */
  steady(snapshot: ClusterSnapshot, ms: number): Set<string> {
    const now = this.monotonic();
    for (const id of this.seen.keys()) if (!snapshot.nodes.has(id)) this.seen.delete(id);
    const steady = new Set<string>();
    for (const [id, { createRevision }] of snapshot.nodes) {
      let known = this.seen.get(id);
      if (known?.createRevision !== createRevision) {
        known = { createRevision, since: now };
        this.seen.set(id, known);
      }
      if (now - known.since >= ms) steady.add(id);
    }
    return steady;
  }
}
