import type { Logger } from 'pino';
import { unrefTimeout, type Schedule } from '../supervise/index.js';
import { applyCleanup, purgeFiles, rulesOf, type Filesystems } from './cleanup.js';
import type { ProcessEntry } from './process-entry.js';
import type { ProcessTable } from './process-table.js';

/** Period of the supervision timer (stale, limits, rates, cleanup), milliseconds. */
const TICK_MS = 1000;
/**
 * Supervisors ticked in one turn of the event loop. Each tick reads two `/proc` files (about
 * 30 µs each on this VM) and updates rates; 200 processes in one turn blocked the loop for 10 ms
 * and more, which every request arriving meanwhile waited for (docs/performance.md#a-full-server,
 * server"). Slices of this size keep each turn around a millisecond.
 */
const SUPERVISORS_PER_TURN = 20;
/**
 * Period of the cleanup of remote (S3) filesystems, milliseconds: each pass lists the bucket
 * once per rule pattern, a request that costs money and time; five seconds keep `max_files` of
 * 2-second HLS segments within three files of its bound.
 */
const REMOTE_CLEANUP_MS = 5000;

/**
 * The once-per-second work over all processes: each supervisor's tick (rates, limits, stale
 * timeout) and the cleanup rules of every output (one pass at a time); and the purges of the
 * `purge_on_delete` files of processes that go away.
 */
export class Housekeeping {
  private cancelTick: (() => void) | undefined;
  /** Bumped by `stop`: slices of a tick still queued then do nothing. */
  private generation = 0;
  private cleaning = false;
  private remoteCleanedAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly table: ProcessTable,
    private readonly filesystems: Filesystems,
    private readonly logger: Logger,
    /** Wall clock, Unix milliseconds. */
    private readonly now: () => number,
    /** Times the ticks on the clock of `now`; the real timer never keeps the process alive. */
    private readonly schedule: Schedule = unrefTimeout,
  ) {}

  /** Ticks every `TICK_MS` until `stop`. */
  start(): void {
    this.cancelTick = this.schedule(() => {
      this.start();
      this.tick();
    }, TICK_MS);
  }

  stop(): void {
    this.generation++;
    this.cancelTick?.();
    this.cancelTick = undefined;
  }

  /** Deletes the `purge_on_delete` files of `entries`; a failure is logged, never thrown. */
  async purge(entries: ProcessEntry[]): Promise<void> {
    try {
      await purgeFiles(
        entries.flatMap((entry) => rulesOf(entry.resolved)),
        this.filesystems,
      );
    } catch (error) {
      this.logger.error({ err: error }, 'purging process files failed');
    }
  }

  private tick(): void {
    this.tickSlice([...this.table.all()], 0);
    const now = this.now();
    if (this.cleaning) return;
    const rules = [...this.table.all()].flatMap((entry) => rulesOf(entry.resolved));
    if (rules.length === 0) return;
    this.cleaning = true;
    const remoteDue = now - this.remoteCleanedAtMs >= REMOTE_CLEANUP_MS;
    if (remoteDue) this.remoteCleanedAtMs = now;
    applyCleanup(rules, this.filesystems, now, remoteDue)
      .catch((error: unknown) => this.logger.error({ err: error }, 'cleanup rules failed'))
      .finally(() => (this.cleaning = false));
  }

  /**
   * Ticks the supervisors of `entries` from `from` on, a slice per turn of the event loop, each
   * slice at its own time (the CPU meter divides by the time between a process's samples).
   */
  private tickSlice(entries: readonly ProcessEntry[], from: number): void {
    const now = this.now();
    const end = Math.min(entries.length, from + SUPERVISORS_PER_TURN);
    for (let index = from; index < end; index++) {
      const entry = entries[index] as ProcessEntry;
      try {
        entry.supervisor.tick(now);
      } catch (error) {
        this.logger.error({ err: error, process: entry.config.id }, 'process tick failed');
      }
    }
    if (end === entries.length) return;
    const generation = this.generation;
    setImmediate(() => {
      if (generation === this.generation) this.tickSlice(entries, end);
    });
  }
}
