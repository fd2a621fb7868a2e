import type { Logger } from 'pino';
import { CATALOG, SampleBatch, METRIC_INDEX, type MetricStore } from './store/index.js';
import type { Collector, Emit } from './collectors/collector.js';

export interface SchedulerOptions {
  collectors: readonly Collector[];
  store: MetricStore;
  /** Time between collections, ms. */
  intervalMs: number;
  /** How long one collector may take before its samples are dropped for that tick, ms. */
  timeoutMs: number;
  /** Wall clock, ms: snapshot times. */
  now: () => number;
  logger: Logger;
  /** Called with every committed snapshot (the history's downsampling); must be cheap and not throw. */
  afterCommit?: (timeMs: number, batch: SampleBatch) => void;
}

/** What the scheduler knows about one collector (counted, never swallowed). */
export interface CollectorStats {
  name: string;
  /** Ticks whose samples were kept. */
  successes: number;
  /** Ticks that threw, rejected, or took longer than the time-out. */
  failures: number;
  /** Ticks skipped because the previous call had not finished yet. */
  skipped: number;
  /** Duration of the last finished call, ms. */
  lastDurationMs: number;
  /** Message of the last failure, `undefined` while it succeeds. */
  lastError: string | undefined;
}

interface CollectorState {
  readonly collector: Collector;
  readonly stats: CollectorStats;
  /** The call still running after it timed out; the collector is not called again until it ends. */
  pending: Promise<unknown> | undefined;
  /** Failures in a row; a streak is logged when it starts and when it ends. */
  streak: number;
}

type Outcome = { ok: true; batch: SampleBatch } | { ok: false; reason: string } | { ok: 'busy' };

/**
 * Collects every collector into the store: right away on `start()` and then every interval, or on
 * demand (`collectNow`, single-flight). Collectors run concurrently and are isolated: one that
 * throws, rejects or is slower than the time-out is logged (once per streak, with its name, the
 * error and the duration), counted, and skipped for that tick; the samples of the others are
 * committed as one snapshot.
 */
export class CollectionScheduler {
  private readonly options: SchedulerOptions;
  private readonly states: CollectorState[];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastCollectionMs = Number.NEGATIVE_INFINITY;

  constructor(options: SchedulerOptions) {
    this.options = options;
    this.states = options.collectors.map((collector) => ({
      collector,
      stats: {
        name: collector.name,
        successes: 0,
        failures: 0,
        skipped: 0,
        lastDurationMs: 0,
        lastError: undefined,
      },
      pending: undefined,
      streak: 0,
    }));
  }

  /**
   * Collects now (without waiting for the first tick), then every interval until `stop()`.
   * `collected`: the first snapshot was just taken (`collectNow` before the server listened), so
   * the first tick comes one interval from now.
   */
  start(collected = false): void {
    if (this.stopped || this.timer !== undefined) return;
    const startedAt = performance.now();
    let tick = 0;
    const schedule = (): void => {
      // Aim at fixed multiples of the interval so snapshots do not drift; skip ticks missed while
      // the event loop was blocked rather than firing them back to back.
      tick = Math.max(tick + 1, Math.ceil((performance.now() - startedAt) / this.options.intervalMs));
      const delay = Math.max(0, startedAt + tick * this.options.intervalMs - performance.now());
      this.timer = setTimeout(() => {
        void this.collectNow();
        if (!this.stopped) schedule();
      }, delay);
      this.timer.unref();
    };
    if (!collected) void this.collectNow();
    schedule();
  }

  /** Stops the timer and waits for a collection in flight to be committed or dropped. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * Runs one collection and commits it; joins the one in flight instead of starting another.
   * Never rejects.
   */
  collectNow(): Promise<void> {
    this.running ??= this.collectAll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Collects unless the newest snapshot is younger than `maxAgeMs` (on-demand collection for
   * Prometheus scrapes while periodic collection is off: at most once per interval).
   */
  async collectIfOlderThan(maxAgeMs: number): Promise<void> {
    if (this.options.now() - this.lastCollectionMs < maxAgeMs && this.options.store.snapshotCount > 0) {
      await this.running;
      return;
    }
    await this.collectNow();
  }

  /** Counters per collector, in registration order. */
  stats(): CollectorStats[] {
    return this.states.map((state) => ({ ...state.stats }));
  }

  private async collectAll(): Promise<void> {
    const startedAt = this.options.now();
    this.lastCollectionMs = startedAt;
    const outcomes = await Promise.all(this.states.map((state) => this.runOne(state)));
    const snapshot = new SampleBatch();
    for (const outcome of outcomes) if (outcome.ok === true) snapshot.append(outcome.batch);
    this.options.store.commit(startedAt, snapshot);
    this.options.afterCommit?.(startedAt, snapshot);
  }

  private async runOne(state: CollectorState): Promise<Outcome> {
    if (state.pending !== undefined) {
      state.stats.skipped++;
      return { ok: 'busy' };
    }
    const batch = new SampleBatch();
    let open = true;
    const emit = this.emitInto(batch, () => open);
    const startedAt = performance.now();
    let failure: string | undefined;
    try {
      const result = state.collector.collect(emit);
      if (result instanceof Promise) failure = await this.settleWithin(state, result);
    } catch (error) {
      failure = describeError(error);
    }
    open = false;
    const durationMs = performance.now() - startedAt;
    // A synchronous collector cannot be interrupted, but one that blocked too long is still slow.
    if (failure === undefined && durationMs > this.options.timeoutMs) {
      failure = `took ${Math.round(durationMs)} ms, the limit is ${this.options.timeoutMs} ms`;
    }
    const outcome: Outcome = failure === undefined ? { ok: true, batch } : { ok: false, reason: failure };
    this.record(state, outcome, durationMs);
    return outcome;
  }

  /**
   * Waits for a collector's promise for at most the time-out. Returns the failure, if any. A call
   * that times out stays `pending` until it settles, so the collector is not stacked up.
   */
  private settleWithin(state: CollectorState, result: Promise<void>): Promise<string | undefined> {
    return new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => {
        state.pending = result
          .catch(() => undefined)
          .finally(() => {
            state.pending = undefined;
          });
        resolve(`did not finish within ${this.options.timeoutMs} ms`);
      }, this.options.timeoutMs);
      result.then(
        () => {
          clearTimeout(timer);
          resolve(undefined);
        },
        (error: unknown) => {
          clearTimeout(timer);
          resolve(describeError(error));
        },
      );
    });
  }

  /** An `emit` that interns into the store and stages into `batch` while `isOpen()`. */
  private emitInto(batch: SampleBatch, isOpen: () => boolean): Emit {
    const store = this.options.store;
    return (metric, labelValues, value) => {
      if (!isOpen()) return; // a late sample of a collector that already timed out
      const metricIndex = METRIC_INDEX.get(metric);
      if (metricIndex === undefined) throw new Error(`unknown metric ${String(metric)}`);
      const expected = CATALOG[metricIndex]!.labels.length;
      if (labelValues.length !== expected) {
        throw new Error(`metric ${metric} has ${expected} labels, got ${labelValues.length} label values`);
      }
      batch.add(store.intern(metricIndex, labelValues), value);
    };
  }

  private record(state: CollectorState, outcome: Outcome, durationMs: number): void {
    const { stats } = state;
    const { logger } = this.options;
    stats.lastDurationMs = durationMs;
    if (outcome.ok === true) {
      stats.successes++;
      if (state.streak > 0) {
        logger.info({ collector: stats.name, failedTicks: state.streak }, 'metrics collector recovered');
      }
      state.streak = 0;
      stats.lastError = undefined;
      return;
    }
    if (outcome.ok === 'busy') return;
    stats.failures++;
    state.streak++;
    if (state.streak === 1 || !sameFailure(outcome.reason, stats.lastError)) {
      logger.warn(
        {
          collector: stats.name,
          error: outcome.reason,
          durationMs: Math.round(durationMs),
          failures: stats.failures,
        },
        'metrics collector failed; its samples are skipped for this tick',
      );
    }
    stats.lastError = outcome.reason;
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether two failure reasons are the same failure, so a streak is logged once: reasons that
 * differ only in their figures (`took 151 ms` after `took 150 ms`) are.
 */
function sameFailure(reason: string, previous: string | undefined): boolean {
  return previous !== undefined && reason.replace(/\d+/g, '#') === previous.replace(/\d+/g, '#');
}
