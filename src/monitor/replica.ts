import type { Config } from '../config/index.js';
import type { MetricsSource } from './http/routes.js';
import { PrometheusExposition } from './prometheus/index.js';
import { CATALOG_JSON, createQueryService, storeCapacityOf } from './query-service.js';
import { CATALOG, MetricStore, SampleBatch } from './store/index.js';

/**
 * One committed snapshot as it travels from the main process to an API worker: the samples by the
 * main store's series ids, and the series those ids stand for where the worker may not know them
 * yet (a new series, or an id the main store reused for another).
 */
export interface SnapshotMessage {
  timeMs: number;
  /** `[main id, metric index, label values]` of the series described in this message. */
  defs: [number, number, string[]][];
  ids: Int32Array;
  values: Float64Array;
}

/**
 * The main process's side of the replicas: each committed snapshot as a message (`snapshot`), and
 * the whole retained window for a worker that starts now (`backlog`). A worker that applies the
 * backlog and then every snapshot holds the same series and values as the main store.
 */
export class ReplicaFeed {
  /** Per main id, the label array it was last described with: `intern` makes a new one per series. */
  private readonly described: (readonly string[] | undefined)[] = [];

  constructor(private readonly store: MetricStore) {}

  /** The message of the snapshot just committed at `timeMs` with `batch`. */
  snapshot(timeMs: number, batch: SampleBatch): SnapshotMessage {
    const ids = new Int32Array(batch.length);
    const values = new Float64Array(batch.length);
    const defs: [number, number, string[]][] = [];
    for (let i = 0; i < batch.length; i++) {
      const id = batch.idAt(i);
      ids[i] = id;
      values[i] = batch.valueAt(i);
      const labels = this.store.labelsOf(id);
      if (this.described[id] !== labels) {
        this.described[id] = labels;
        defs.push([id, this.store.metricOf(id), [...labels]]);
      }
    }
    return { timeMs, defs, ids, values };
  }

  /** Every retained snapshot, oldest first, each describing all the series it holds. */
  backlog(): SnapshotMessage[] {
    const store = this.store;
    const live = CATALOG.flatMap((_entry, metric) => store.seriesOf(metric));
    const messages: SnapshotMessage[] = [];
    for (let seq = store.oldestSeq; seq <= store.newestSeq && store.snapshotCount > 0; seq++) {
      const ids: number[] = [];
      const values: number[] = [];
      for (const id of live) {
        const value = store.value(id, seq);
        if (Number.isFinite(value)) {
          ids.push(id);
          values.push(value);
        }
      }
      const defs = ids.map((id): [number, number, string[]] => {
        this.described[id] = store.labelsOf(id);
        return [id, store.metricOf(id), [...store.labelsOf(id)]];
      });
      messages.push({
        timeMs: store.timeMs(seq),
        defs,
        ids: Int32Array.from(ids),
        values: Float64Array.from(values),
      });
    }
    return messages;
  }
}

/**
 * An API worker's copy of the metric store, filled only from the main process's messages, with the
 * query service and catalog of `POST` and `GET /api/v3/metrics` over it. It has no history: a
 * query whose range reaches past the raw window is the main process's (`needsHistory`).
 */
export class MetricReplica implements MetricsSource {
  readonly store: MetricStore;
  readonly query: MetricsSource['query'];
  readonly exposition: PrometheusExposition;
  readonly catalogJson = CATALOG_JSON;
  readonly enabled: boolean;
  private readonly rangeSec: number;
  /** Whether the main process has history tiers (a long range is its to answer). */
  readonly historyInMain: boolean;
  private readonly idOfMain = new Map<number, number>();
  private readonly batch = new SampleBatch();

  constructor(config: Config) {
    this.store = new MetricStore(storeCapacityOf(config));
    this.query = createQueryService(config, this.store, undefined);
    this.exposition = new PrometheusExposition(this.store, config.id);
    this.enabled = config.metrics.enable;
    this.rangeSec = config.metrics.range_sec;
    this.historyInMain = config.metrics.enable && config.metrics.history.enable;
  }

  /** Takes one snapshot from the main process, in the order they were committed there. */
  apply(message: SnapshotMessage): void {
    for (const [mainId, metric, labels] of message.defs) {
      this.idOfMain.set(mainId, this.store.intern(metric, labels));
    }
    const batch = this.batch;
    batch.clear();
    for (let i = 0; i < message.ids.length; i++) {
      const id = this.idOfMain.get(message.ids[i]!);
      if (id !== undefined) batch.add(id, message.values[i]!);
    }
    this.store.commit(message.timeMs, batch);
  }

  /** Whether a query asking `timerangeSec` would read the main process's history tiers. */
  needsHistory(timerangeSec: unknown): boolean {
    return this.historyInMain && typeof timerangeSec === 'number' && timerangeSec > this.rangeSec;
  }

  prepareScrape(): Promise<void> {
    return Promise.resolve();
  }
}
