import type { ClusterSnapshot } from './view.js';

/**
 * Whether the picture shows a process assigned to a node that is gone (its lease expired) or
 * leaving one that is gone: the leader is about to move it, and the node that gets it learns so
 * only at its next read.
 */
export function movesAwaited(snapshot: ClusterSnapshot): boolean {
  for (const { value } of snapshot.assignments.values()) {
    if (!snapshot.nodes.has(value.node)) return true;
    if (value.after !== undefined && !snapshot.nodes.has(value.after)) return true;
  }
  return false;
}

/**
 * When a node reads the cluster again before its next periodic read, so that a failover waits
 * for no read: while a node's registration has not changed for `staleMs` (each node writes it
 * every second: it may be dead, and the leader moves its processes as soon as it sees its lease
 * expire), and while moves off a dead node are awaited (their new nodes start them as soon as
 * they see them). For at most `windowMs` from when that began: a node may be slow to write
 * without being dead, and moves the leader cannot make (no node may take them, or it waits a
 * lease time after etcd came back) may stay awaited for long.
 * A node's writes are timed by this node's own clock (when it saw them change), never by the
 * time written in them, which comes from another machine's clock.
 */
export class SoonerReads {
  /** Monotonic ms since a failover has seemed under way, while it does. */
  private since: number | undefined;
  /** Per node: its registration's `updatedAt` as last read, and when this node saw it change. */
  private readonly writes = new Map<string, { updatedAt: number; seenAt: number }>();

  constructor(
    private readonly staleMs: number,
    private readonly windowMs: number,
    private readonly monotonic: () => number,
  ) {}

  wanted(snapshot: ClusterSnapshot): boolean {
    const now = this.monotonic();
    if (!this.someNodeStale(snapshot, now) && !movesAwaited(snapshot)) {
      this.since = undefined;
      return false;
    }
    this.since ??= now;
    return now - this.since < this.windowMs;
  }

  private someNodeStale(snapshot: ClusterSnapshot, now: number): boolean {
    for (const id of this.writes.keys()) if (!snapshot.nodes.has(id)) this.writes.delete(id);
    let stale = false;
    for (const [id, { updatedAt }] of snapshot.nodes) {
      const known = this.writes.get(id);
      if (known?.updatedAt !== updatedAt) this.writes.set(id, { updatedAt, seenAt: now });
      else if (now - known.seenAt >= this.staleMs) stale = true;
    }
    return stale;
  }
}
