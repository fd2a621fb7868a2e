import type { Logger } from 'pino';
import { applyCleanup, purgeFiles, rulesOf, type Filesystems } from './cleanup.js';
import type { ProcessEntry } from './process-entry.js';
import type { ProcessTable } from './process-table.js';

/** Period of the supervision timer (stale, limits, rates, cleanup), milliseconds. */
const TICK_MS = 1000;

/**
 * The once-per-second work over all processes: each supervisor's tick (rates, limits, stale
 * timeout) and the cleanup rules of every output (one pass at a time); and the purges of the
 * `purge_on_delete` files of processes that go away.
 */
export class Housekeeping {
  private ticker: NodeJS.Timeout | undefined;
  private cleaning = false;

  constructor(
    private readonly table: ProcessTable,
    private readonly filesystems: Filesystems,
    private readonly logger: Logger,
    /** Wall clock, Unix milliseconds. */
    private readonly now: () => number,
  ) {}

  start(): void {
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
  }

  stop(): void {
    clearInterval(this.ticker);
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
    const now = this.now();
    for (const entry of this.table.all()) {
      entry.supervisor.tick(now).catch((error: unknown) => {
        this.logger.error({ err: error, process: entry.config.id }, 'process tick failed');
      });
    }
    if (this.cleaning) return;
    const rules = [...this.table.all()].flatMap((entry) => rulesOf(entry.resolved));
    if (rules.length === 0) return;
    this.cleaning = true;
    applyCleanup(rules, this.filesystems, now)
      .catch((error: unknown) => this.logger.error({ err: error }, 'cleanup rules failed'))
      .finally(() => (this.cleaning = false));
  }
}
