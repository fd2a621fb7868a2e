import { CATALOG, compareLabelValues, type MetricStore } from '../store/index.js';
import {
  describeSeries,
  type MetricHistory,
  type SeriesInfo,
  type Tier,
  type TierPiece,
} from '../history/index.js';
import { labelsJson, METRICS_IN_NAME_ORDER } from './answer-text.js';
import { formatNumber } from './format-number.js';
import { tierStepOf, type PointPlan } from './point-plan.js';

/**
 * One series of a history-served answer with its encoded `[t,v]` pairs from point `from` of the
 * view's plan to its end (each pair preceded by a comma), extended towards older points when a
 * query asks for more.
 */
export interface HistoryEntry {
  readonly key: string;
  readonly metricIndex: number;
  readonly labelValues: readonly string[];
  /** The store's id of the series in this snapshot, or -1. */
  readonly storeId: number;
  readonly head: Buffer;
  /** First plan point encoded; the plan's length while nothing is. */
  from: number;
  text: string;
  /** `starts[k − from]`: where the pairs of points `k …` begin in `text` (the last one is its length). */
  starts: number[];
  bytes: Buffer;
}

/** Series lists kept per view, by first point (a dashboard asks a few ranges of one step). */
const MAX_LISTS_PER_VIEW = 4;

/**
 * The points of every series for one tier and step in one snapshot (the history's counterpart of
 * `StepValues`): the plan of the longest range the tier answers at that step, and per series its
 * pairs encoded once, from the newest point back only as far as a query has asked. A query of `n`
 * points takes the last `n` of the plan (the times of a step's points do not depend on `n`), so
 * every range of that tier and step shares the same bytes, and a short range never decodes the
 * tier's whole retention.
 */
export class HistoryView {
  readonly plan: PointPlan;
  private readonly store: MetricStore;
  private readonly history: MetricHistory;
  private readonly tier: Tier;
  private readonly entries = new Map<string, HistoryEntry>();
  private readonly lists = new Map<number, (HistoryEntry[] | undefined)[]>();
  private readonly storeKeys: (string | undefined)[] = [];

  constructor(store: MetricStore, history: MetricHistory, tier: Tier, plan: PointPlan) {
    this.store = store;
    this.history = history;
    this.tier = tier;
    this.plan = plan;
  }

  get count(): number {
    return this.plan.timesSec.length;
  }

  /**
   * Per catalog metric that `wantsMetric` accepts, the series that may have a point from plan point
   * `first` on (held by the store now, or by the tier in that range), in label order; not yet
   * encoded that far.
   */
  async seriesFrom(
    first: number,
    wantsMetric: (metricIndex: number) => boolean,
  ): Promise<(HistoryEntry[] | undefined)[]> {
    const cached = this.lists.get(first);
    if (
      cached !== undefined &&
      METRICS_IN_NAME_ORDER.every((m) => !wantsMetric(m) || cached[m] !== undefined)
    )
      return cached;
    const fromSec = tierStepOf(this.tier, this.plan.timesSec[first]!);
    const toSec = this.plan.timesSec[this.count - 1]!;
    const tierSeries = await this.history.seriesIn(this.tier, fromSec, toSec, wantsMetric);
    // Taken after the wait: another query may have filled the cache meanwhile.
    const lists: (HistoryEntry[] | undefined)[] = this.lists.get(first) ?? [];
    const byMetric = new Map<number, Map<string, HistoryEntry>>();
    for (const metricIndex of METRICS_IN_NAME_ORDER) {
      if (!wantsMetric(metricIndex) || lists[metricIndex] !== undefined) continue;
      const map = new Map<string, HistoryEntry>();
      byMetric.set(metricIndex, map);
      for (const id of this.store.seriesOf(metricIndex)) {
        const entry = this.entryOfStoreSeries(id);
        map.set(entry.key, entry);
      }
    }
    for (const series of tierSeries.values()) {
      const map = byMetric.get(series.metricIndex);
      if (map !== undefined && !map.has(series.key))
        map.set(series.key, this.entryOf(series.key, series, -1));
    }
    for (const [metricIndex, map] of byMetric) {
      lists[metricIndex] = [...map.values()].sort((a, b) => compareLabelValues(a.labelValues, b.labelValues));
    }
    if (!this.lists.has(first) && this.lists.size < MAX_LISTS_PER_VIEW) this.lists.set(first, lists);
    return lists;
  }

  /** Encodes `entries` from plan point `first` on (one tier read for all that need older points). */
  async encodeFrom(entries: readonly HistoryEntry[], first: number): Promise<void> {
    const pending = entries.filter((entry) => entry.from > first);
    if (pending.length === 0) return;
    let last = first;
    for (const entry of pending) last = Math.max(last, entry.from - 1);
    const keys = new Set(pending.map((entry) => entry.key));
    const read = await this.history.read(
      this.tier,
      (series) => keys.has(series.key),
      tierStepOf(this.tier, this.plan.timesSec[first]!),
      this.plan.timesSec[last]!,
    );
    // Another query of this view may have encoded some of them meanwhile (from the same snapshot).
    for (const entry of pending)
      if (entry.from > first) this.extend(entry, first, read.get(entry.key)?.pieces ?? []);
  }

  private extend(entry: HistoryEntry, first: number, pieces: readonly TierPiece[]): void {
    const { timesSec, seqs } = this.plan;
    const cursor = new PieceCursor(pieces);
    const starts: number[] = [];
    let text = '';
    for (let k = first; k < entry.from; k++) {
      starts.push(text.length);
      const seq = seqs[k]!;
      const timeSec = timesSec[k]!;
      let value: number;
      if (seq >= 0) value = entry.storeId >= 0 ? this.store.value(entry.storeId, seq) : Number.NaN;
      else value = cursor.valueAt(tierStepOf(this.tier, timeSec));
      if (!Number.isFinite(value)) continue;
      text += `,[${timeSec},${formatNumber(value)}]`;
    }
    const shift = text.length;
    for (const start of entry.starts) starts.push(start + shift);
    entry.text = text + entry.text;
    entry.starts = starts;
    entry.from = first;
    entry.bytes = Buffer.from(entry.text, 'latin1');
  }

  private entryOfStoreSeries(id: number): HistoryEntry {
    const labelValues = this.store.labelsOf(id);
    const metricIndex = this.store.metricOf(id);
    const key = (this.storeKeys[id] ??= describeSeries(metricIndex, labelValues).key);
    return this.entryOf(key, { metricIndex, labelValues }, id);
  }

  private entryOf(
    key: string,
    series: Pick<SeriesInfo, 'metricIndex' | 'labelValues'>,
    storeId: number,
  ): HistoryEntry {
    let entry = this.entries.get(key);
    if (entry === undefined) {
      const descriptor = CATALOG[series.metricIndex]!;
      entry = {
        key,
        metricIndex: series.metricIndex,
        labelValues: series.labelValues,
        storeId,
        head: Buffer.from(
          `{"name":${JSON.stringify(descriptor.name)},"labels":${labelsJson(descriptor.labels, series.labelValues)},"values":[`,
          'utf8',
        ),
        from: this.count,
        text: '',
        starts: [0],
        bytes: Buffer.alloc(0),
      };
      this.entries.set(key, entry);
    }
    return entry;
  }
}

/** Values of a series' tier pieces (oldest first) at step starts asked for in increasing order. */
class PieceCursor {
  private piece = 0;
  private index = 0;
  private readonly pieces: readonly TierPiece[];

  constructor(pieces: readonly TierPiece[]) {
    this.pieces = pieces;
  }

  /** The value of the point stamped `stepStartSec`, or NaN when the series has none there. */
  valueAt(stepStartSec: number): number {
    while (this.piece < this.pieces.length) {
      const piece = this.pieces[this.piece]!;
      while (this.index < piece.steps.length) {
        const timeSec = piece.startSec + piece.steps[this.index]! * piece.stepSec;
        if (timeSec === stepStartSec) return piece.values[this.index]!;
        if (timeSec > stepStartSec) return Number.NaN;
        this.index++;
      }
      this.piece++;
      this.index = 0;
    }
    return Number.NaN;
  }
}
