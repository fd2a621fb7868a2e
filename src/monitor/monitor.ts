import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { MetricStore, type SampleBatch } from './store/index.js';
import type { Collector } from './collectors/collector.js';
import { MetricHistory } from './history/index.js';
import { PrometheusExposition } from './prometheus/index.js';
import { CATALOG_JSON, createQueryService, storeCapacityOf } from './query-service.js';
import type { MetricsQueryService } from './query/index.js';
import { CollectionScheduler, type CollectorStats } from './scheduler.js';

export interface MonitorDeps {
  logger: Logger;
  /** Wall clock, ms. */
  now: () => number;
  /**
   * Every module's collectors. Read when the monitor starts, so modules wired after the monitor
   * was created may still add theirs.
   */
  collectors: readonly Collector[];
}

/**
 * The metrics subsystem without HTTP: the store, the scheduler that fills it, the query service of
 * the API and the Prometheus exposition, all reading the same store (docs/metrics.md).
 */
export class Monitor {
  readonly store: MetricStore;
  readonly query: MetricsQueryService;
  readonly exposition: PrometheusExposition;
  /** `GET /api/v3/metrics`: the catalog sorted by name, as JSON text (it never changes). */
  readonly catalogJson: string = CATALOG_JSON;
  /** Downsampled history on disk; `undefined` unless `metrics.enable` and `metrics.history.enable`. */
  readonly history: MetricHistory | undefined;
  /** Is periodic collection on (`metrics.enable`)? */
  readonly enabled: boolean;
  /** Collection interval, ms (at least 1 s, also when collection is off and a scrape collects on demand). */
  readonly intervalMs: number;

  private readonly deps: MonitorDeps;
  /** The history's load (its tiers are loaded by the constructor; the unfinished hour is rebuilt after). */
  private readonly historyLoaded: Promise<void> = Promise.resolve();
  private scheduler: CollectionScheduler | undefined;
  /** `collectFirst` took the first snapshot and periodic collection has not started yet. */
  private firstCollected = false;
  private readonly commitListeners: ((timeMs: number, batch: SampleBatch) => void)[] = [];

  constructor(config: Config, deps: MonitorDeps) {
    this.deps = deps;
    const metrics = config.metrics;
    this.enabled = metrics.enable;
    this.intervalMs = Math.max(1, metrics.interval_sec) * 1000;
    // With collection off, one snapshot is enough for on-demand Prometheus scrapes.
    this.store = new MetricStore(storeCapacityOf(config));
    const history = metrics.history;
    if (this.enabled && history.enable) {
      this.history = new MetricHistory({
        dir: history.dir,
        minuteRetentionDays: history.minute_retention_days,
        hourRetentionDays: history.hour_retention_days,
        maxSizeBytes: history.max_size_mbytes * 1024 * 1024,
        logger: deps.logger,
      });
      this.historyLoaded = this.history.load().catch((error: unknown) => {
        deps.logger.error({ err: error }, 'metrics history: the unfinished hour could not be rebuilt');
      });
    } else this.history = undefined;
    this.query = createQueryService(config, this.store, this.history);
    this.exposition = new PrometheusExposition(this.store, config.id);
  }

  /**
   * Calls `listener` with every snapshot committed from now on, after the store took it (the API
   * workers' replicas, docs/performance.md#the-api-on-every-core); must be cheap and not throw.
   */
  onCommit(listener: (timeMs: number, batch: SampleBatch) => void): void {
    this.commitListeners.push(listener);
  }

  /**
   * The first snapshot, taken before the server listens, so that the first request already finds
   * it (docs/metrics.md#collection: the first one right at start). Bounded by the collectors' time-out; with collection
   * off, nothing (scrapes collect on demand).
   */
  async collectFirst(): Promise<void> {
    if (!this.enabled || this.scheduler !== undefined) return;
    await this.historyLoaded;
    if (this.scheduler !== undefined) return;
    this.scheduler = this.createScheduler();
    await this.scheduler.collectNow();
    this.firstCollected = true;
  }

  /** Creates the scheduler from the collectors registered so far; starts periodic collection when enabled. */
  start(): void {
    if (this.scheduler !== undefined) {
      if (this.firstCollected) {
        this.firstCollected = false;
        this.scheduler.start(true);
      }
      return;
    }
    this.scheduler = this.createScheduler();
    if (this.enabled) this.scheduler.start();
  }

  private createScheduler(): CollectionScheduler {
    return new CollectionScheduler({
      collectors: [...this.deps.collectors],
      store: this.store,
      intervalMs: this.intervalMs,
      // A collector gets most of an interval, so a slow one never delays the next snapshot.
      timeoutMs: Math.min(this.intervalMs * 0.8, 10_000),
      now: this.deps.now,
      logger: this.deps.logger,
      afterCommit: (timeMs, batch) => {
        this.history?.ingest(timeMs, batch, this.store);
        for (const listener of this.commitListeners) listener(timeMs, batch);
      },
    });
  }

  /**
   * Makes sure the store holds a snapshot for a scrape: with periodic collection this is a no-op
   * (a scrape reads the latest snapshot); without it, collects on demand at most once per interval.
   */
  async prepareScrape(): Promise<void> {
    if (this.enabled) return;
    this.start();
    await this.scheduler?.collectIfOlderThan(this.intervalMs);
  }

  /**
   * Collects one snapshot now (single-flight with the periodic collection). For tools and
   * benchmarks that fill the store faster than real time with an injected clock; a request never
   * calls this (docs/metrics.md#collection).
   */
  async collectNow(): Promise<void> {
    this.start();
    await this.scheduler?.collectNow();
  }

  /** Counters of each collector (successes, failures, skipped ticks, last duration and error). */
  collectorStats(): CollectorStats[] {
    return this.scheduler?.stats() ?? [];
  }

  /**
   * Stops collection, then writes the unfinished minute of the history, waits for its queued file
   * operations and closes its files.
   */
  async stop(): Promise<void> {
    await this.scheduler?.stop();
    await this.historyLoaded;
    await this.history?.close();
  }
}
