import type { Watchdog } from './watchdog.js';

/**
 * The rule that keeps one encoder per process (docs/cluster.md#moves-and-fencing): this node may run
 * encoders only until its lease could have expired in etcd. Each renewal counts from the moment
 * the request was sent (etcd counts from when it got it, later), less a margin for the kill;
 * past that deadline the encoders are stopped, by the server if it can and by the watchdog if it
 * cannot, before etcd lets the leader give the processes to another node.
 */
export class Fence {
  private deadline = -Infinity;
  private everRenewed = false;

  constructor(
    private readonly ttlMs: number,
    private readonly marginMs: number,
    private readonly monotonic: () => number,
    private readonly watchdog: Watchdog,
  ) {}

  /** The lease was renewed by a request sent at `sentAt` (monotonic ms). */
  renewed(sentAt: number): void {
    const next = sentAt + this.ttlMs - this.marginMs;
    if (next <= this.deadline) return;
    this.deadline = next;
    this.everRenewed = true;
    this.watchdog.arm(this.deadline - this.monotonic());
  }

  /** The lease is gone: nothing may run until the next renewal. */
  lost(): void {
    this.deadline = -Infinity;
  }

  /** Milliseconds until encoders must be gone (negative: past). */
  remainingMs(): number {
    return this.deadline - this.monotonic();
  }

  /**
   * Whether an encoder may start now. Before the node joined it runs none of the cluster's
   * processes, and the probes of the encoder binary at start must run.
   */
  mayRun(): boolean {
    return !this.everRenewed || this.remainingMs() > 0;
  }

  close(): void {
    this.watchdog.arm(-1);
    this.watchdog.close();
  }
}
