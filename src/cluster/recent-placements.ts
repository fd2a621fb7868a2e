import { count, type Candidate, type Placing } from './placement.js';
import type { ClusterSnapshot } from './view.js';

interface Placed {
  node: string;
  placing: Placing;
  /** `ClusterView.readsStarted` when the create was answered; undefined while it is under way. */
  answeredAt?: number;
}

/**
 * The creates this node placed that a picture of etcd may not show yet: one under way, or one
 * whose write landed after a read that was already running began. Placement counts them, so that
 * creates one after the other spread as evenly as the picture of a single read would let them.
 * A placement is forgotten once a picture shows it, or once a read begun after its answer ended.
 */
export class RecentPlacements {
  private readonly placed = new Map<string, Placed>();

  add(id: string, node: string, placing: Placing): void {
    this.placed.set(id, { node, placing });
  }

  /** The create was answered: saved, it stays counted until a read shows it; failed, it goes. */
  answered(id: string, saved: boolean, readsStarted: number): void {
    const placed = this.placed.get(id);
    if (placed === undefined) return;
    if (saved) placed.answeredAt = readsStarted;
    else this.placed.delete(id);
  }

  /** The node a recent create of `id` went to, when `snapshot` does not show it yet. */
  nodeOf(snapshot: ClusterSnapshot, id: string): string | undefined {
    this.forgetSeen(snapshot);
    return this.placed.get(id)?.node;
  }

  /** Adds the placements `snapshot` does not show yet to its candidates. */
  count(snapshot: ClusterSnapshot, candidates: Map<string, Candidate>): Map<string, Candidate> {
    this.forgetSeen(snapshot);
    for (const { node, placing } of this.placed.values()) {
      const candidate = candidates.get(node);
      if (candidate !== undefined) count(candidate, placing);
    }
    return candidates;
  }

  private forgetSeen(snapshot: ClusterSnapshot): void {
    for (const [id, { answeredAt }] of this.placed) {
      const readAfterAnswer = answeredAt !== undefined && snapshot.read > answeredAt;
      if (snapshot.assignments.has(id) || readAfterAnswer) this.placed.delete(id);
    }
  }
}
