import { createHash } from 'node:crypto';
import { CATALOG } from './catalog.js';
import type { SampleBatch } from './sample-batch.js';
import { ValueRows } from './value-rows.js';

/**
 * Longest label value the store keeps, UTF-16 code units. Matching a label pattern costs its
 * program size times the value's length, and process ids and addresses are chosen by API users, so
 * a longer value is cut (see `boundLabelValue`).
 */
export const MAX_LABEL_VALUE_LENGTH = 256;

/** Catalog index of each metric name (position in `CATALOG`). */
export const METRIC_INDEX: ReadonlyMap<string, number> = new Map(
  CATALOG.map((entry, index) => [entry.name, index]),
);

/**
 * The last `capacity` snapshots of every series (docs/metrics.md#collection), in typed arrays:
 * - a ring of snapshot times (ms), addressed by the snapshot's sequence number modulo `capacity`;
 * - per series one row of `capacity` float64 values in the same ring order, `NaN` = no sample.
 *
 * Series are interned by metric and label values; a series id is also its row. A series with no
 * retained sample is dropped at the next commit and its id reused. Nothing here allocates per
 * sample: a commit writes into the rows in place.
 *
 * Reads (`value`, `timeMs`, `seriesOf`) are synchronous and only see committed snapshots.
 */
export class MetricStore {
  /** Snapshots kept: `floor(range_sec / interval_sec)`. */
  readonly capacity: number;
  private readonly times: Float64Array;
  private readonly rows: ValueRows;
  private newest = -1;

  private readonly idByKey = new Map<string, number>();
  private keys: (string | undefined)[] = [];
  private metrics: number[] = [];
  private labelValues: (readonly string[] | undefined)[] = [];
  /** Sequence number of each series' newest sample; -1 = none yet. */
  private lastSeq = new Float64Array(256).fill(-1);
  private readonly freeIds: number[] = [];
  private liveCount = 0;

  private readonly seriesByMetric: Set<number>[] = CATALOG.map(() => new Set<number>());
  private readonly sortedByMetric: (readonly number[] | undefined)[] = CATALOG.map(() => undefined);

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity: must be an integer >= 1`);
    this.capacity = capacity;
    this.times = new Float64Array(capacity);
    this.rows = new ValueRows(capacity);
  }

  /**
   * The id of the series `metricIndex` + `labelValues`, created (without samples) if new. The label
   * values are copied, so the caller may reuse its array; one longer than `MAX_LABEL_VALUE_LENGTH` is
   * cut (`boundLabelValue`).
   */
  intern(metricIndex: number, labelValues: readonly string[]): number {
    for (const value of labelValues) {
      if (value.length > MAX_LABEL_VALUE_LENGTH) {
        labelValues = labelValues.map(boundLabelValue);
        break;
      }
    }
    const key = seriesKey(metricIndex, labelValues);
    const existing = this.idByKey.get(key);
    if (existing !== undefined) return existing;
    const id = this.freeIds.pop() ?? this.keys.length;
    this.idByKey.set(key, id);
    this.keys[id] = key;
    this.metrics[id] = metricIndex;
    this.labelValues[id] = labelValues.slice();
    if (id >= this.lastSeq.length) this.growLastSeq();
    this.lastSeq[id] = -1;
    this.rows.ensureRow(id);
    this.seriesByMetric[metricIndex]!.add(id);
    this.sortedByMetric[metricIndex] = undefined;
    this.liveCount++;
    return id;
  }

  /**
   * Adds one snapshot taken at `timeMs` holding the samples of `batch`, replacing the oldest one
   * when the ring is full, then drops the series that no longer have a retained sample.
   * Non-finite values are not stored (NaN and infinities are never sent, docs/metrics.md#post-apiv3metrics-the-query).
   */
  commit(timeMs: number, batch: SampleBatch): void {
    const seq = this.newest + 1;
    const slot = seq % this.capacity;
    // The slot still holds the values of snapshot `seq - capacity`, which leaves the window now.
    for (let id = 0; id < this.keys.length; id++) {
      if (this.keys[id] !== undefined) this.rows.set(id, slot, Number.NaN);
    }
    this.times[slot] = timeMs;
    this.newest = seq;
    for (let i = 0; i < batch.length; i++) {
      const id = batch.idAt(i);
      const value = batch.valueAt(i);
      if (this.keys[id] === undefined || !Number.isFinite(value)) continue;
      this.rows.set(id, slot, value);
      this.lastSeq[id] = seq;
    }
    this.dropExpired(seq - this.capacity);
  }

  /** Number of retained snapshots (0 … capacity). */
  get snapshotCount(): number {
    return Math.min(this.newest + 1, this.capacity);
  }

  /** Sequence number of the newest snapshot; -1 before the first commit. Changes on every commit. */
  get newestSeq(): number {
    return this.newest;
  }

  /** Sequence number of the oldest retained snapshot (meaningless while `snapshotCount` is 0). */
  get oldestSeq(): number {
    return this.newest - this.snapshotCount + 1;
  }

  /** Time of a retained snapshot, ms. */
  timeMs(seq: number): number {
    return this.times[seq % this.capacity]!;
  }

  /** Value of series `id` in retained snapshot `seq`; `NaN` when the series had no sample in it. */
  value(id: number, seq: number): number {
    return this.rows.get(id, seq % this.capacity);
  }

  /** Live series of a metric, ordered by their label values (catalog label order). Cached until the set changes. */
  seriesOf(metricIndex: number): readonly number[] {
    let sorted = this.sortedByMetric[metricIndex];
    if (sorted === undefined) {
      const labels = this.labelValues;
      sorted = [...(this.seriesByMetric[metricIndex] ?? [])].sort((a, b) =>
        compareLabelValues(labels[a]!, labels[b]!),
      );
      this.sortedByMetric[metricIndex] = sorted;
    }
    return sorted;
  }

  /** Label values of a live series, in catalog label order. */
  labelsOf(id: number): readonly string[] {
    return this.labelValues[id] ?? [];
  }

  metricOf(id: number): number {
    return this.metrics[id] ?? -1;
  }

  /** Number of live series. */
  get seriesCount(): number {
    return this.liveCount;
  }

  /** Bytes held by the value rows (the dominant cost; for docs and the benchmark). */
  get valueBytes(): number {
    return this.rows.byteLength;
  }

  private dropExpired(lastDroppedSeq: number): void {
    for (let id = 0; id < this.keys.length; id++) {
      const key = this.keys[id];
      const last = this.lastSeq[id]!;
      // `last < 0`: interned by a collector whose samples were discarded (it failed that tick).
      if (key === undefined || (last >= 0 && last > lastDroppedSeq)) continue;
      this.idByKey.delete(key);
      this.keys[id] = undefined;
      this.labelValues[id] = undefined;
      const metricIndex = this.metrics[id]!;
      this.seriesByMetric[metricIndex]!.delete(id);
      this.sortedByMetric[metricIndex] = undefined;
      this.rows.clearRow(id);
      this.freeIds.push(id);
      this.liveCount--;
    }
  }

  private growLastSeq(): void {
    const grown = new Float64Array(this.lastSeq.length * 2).fill(-1);
    grown.set(this.lastSeq);
    this.lastSeq = grown;
  }
}

/** Unambiguous key of a series: metric index, then each label value prefixed with its length. */
function seriesKey(metricIndex: number, labelValues: readonly string[]): string {
  let key = String(metricIndex);
  for (const value of labelValues) key += `|${value.length}:${value}`;
  return key;
}

/** Orders label value lists element by element (UTF-16 code unit order, like Go's string compare for ASCII). */
export function compareLabelValues(a: readonly string[], b: readonly string[]): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * A label value of at most `MAX_LABEL_VALUE_LENGTH` code units: a longer one becomes its first
 * 240 code units, `…` and 12 hex digits of its SHA-256, so two long values that share a prefix
 * stay two series.
 */
export function boundLabelValue(value: string): string {
  if (value.length <= MAX_LABEL_VALUE_LENGTH) return value;
  let cut = MAX_LABEL_VALUE_LENGTH - 16;
  // Never split a surrogate pair.
  const last = value.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--;
  return `${value.slice(0, cut)}…${createHash('sha256').update(value).digest('hex').slice(0, 12)}`;
}
