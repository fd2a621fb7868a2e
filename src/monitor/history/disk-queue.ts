/**
 * The history's file work (appending a step to a log, sealing a window, deleting expired files,
 * closing logs), run one operation after another and never inside the collection tick: the tick
 * only queues it (docs/history.md, The event loop and the disk). Order matters (a window is sealed
 * before the next one's first record is appended, retention runs after the append that may have
 * sealed), so each operation starts when the one before it has settled. An operation that fails
 * does not stop the ones after it; its outcome goes to `onSettled`, which counts and logs.
 */
export class DiskQueue {
  private tail: Promise<void> = Promise.resolve();
  private readonly onSettled: (error: unknown) => void;

  /** `onSettled(undefined)` after an operation that worked, `onSettled(error)` after one that threw. */
  constructor(onSettled: (error: unknown) => void) {
    this.onSettled = onSettled;
  }

  /** Queues `operation` after everything queued before it. */
  run(operation: () => Promise<unknown>): void {
    this.tail = this.tail.then(operation).then(
      () => this.onSettled(undefined),
      (error: unknown) => this.onSettled(error ?? new Error('history file operation failed')),
    );
  }

  /** Resolves once every operation queued so far has settled (never rejects). */
  settled(): Promise<void> {
    return this.tail;
  }
}
