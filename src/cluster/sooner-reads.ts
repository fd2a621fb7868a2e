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
 * When a node reads the cluster again before its next periodic read: while moves off a dead node
 * are awaited (a failover: the processes' new nodes start them as soon as they see the moves),
 * but for at most `windowMs` from when that began, since moves the leader cannot make (no node
 * may take them, or it waits a lease time after etcd came back) may stay awaited for long.
 */
export class SoonerReads {
  /** Monotonic ms since moves have been awaited, while they are. */
  private since: number | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly monotonic: () => number,
  ) {}

  wanted(snapshot: ClusterSnapshot): boolean {
    if (!movesAwaited(snapshot)) {
      this.since = undefined;
      return false;
    }
    this.since ??= this.monotonic();
    return this.monotonic() - this.since < this.windowMs;
  }
}
