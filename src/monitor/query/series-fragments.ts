import { CATALOG, type MetricStore } from '../store/index.js';
import type { MetricHistory } from '../history/index.js';
import { labelsJson } from './answer-text.js';
import { formatNumber } from './format-number.js';
import { BlockArena } from './block-arena.js';
import { HistoryView } from './history-view.js';
import { planPoints, toUnixSeconds, type HistoryRange, type PointPlan } from './point-plan.js';

/**
 * Steps (`interval_sec`) whose encoded values are kept per snapshot (and as many history views,
 * history-view.ts). A query with another step has its own points encoded for it alone: an
 * attacker cycling through steps cannot make the server encode the whole window again and again
 * within one snapshot.
 */
const MAX_STEPS_PER_SNAPSHOT = 4;

/** Bytes of whole-metric blocks kept per snapshot; past it, blocks are made per answer. */
const MAX_BLOCK_BYTES = 8 << 20;

/** The `[t,v]` pairs of one series over a whole plan, as bytes (ASCII), each pair preceded by a comma. */
export interface EncodedValues {
  bytes: Buffer;
  /**
   * `starts[k]`: where the pairs of points `k …` begin in `bytes` (`starts[N]` = its length), so the
   * last `n` points of a plan are `bytes[starts[N − n] + 1 …]` (the `+ 1` skips the comma).
   */
  starts: Int32Array;
}

/** The values of every series for one step, encoded when first asked for, for one snapshot. */
export class StepValues {
  readonly plan: PointPlan;
  private readonly store: MetricStore;
  private readonly encoded: (EncodedValues | undefined)[] = [];

  constructor(store: MetricStore, plan: PointPlan) {
    this.store = store;
    this.plan = plan;
  }

  /** Number of points of the plan (the most a query of this step asks for). */
  get count(): number {
    return this.plan.seqs.length;
  }

  of(id: number): EncodedValues {
    let values = this.encoded[id];
    if (values === undefined) {
      values = encodeValues(this.store, id, this.plan);
      this.encoded[id] = values;
    }
    return values;
  }
}

function encodeValues(store: MetricStore, id: number, plan: PointPlan): EncodedValues {
  const count = plan.seqs.length;
  const starts = new Int32Array(count + 1);
  let text = '';
  for (let k = 0; k < count; k++) {
    starts[k] = text.length;
    const seq = plan.seqs[k]!;
    if (seq < 0) continue;
    const value = store.value(id, seq);
    if (Number.isNaN(value)) continue;
    text += `,[${plan.timesSec[k]!},${formatNumber(value)}]`;
  }
  starts[count] = text.length;
  return { bytes: Buffer.from(text, 'latin1'), starts };
}

/**
 * The encoded JSON pieces answers are assembled from (assemble-answer.ts), each made once:
 * - per series, its head `{"name":…,"labels":{…},"values":[`, kept while the series lives;
 * - per series and snapshot, its whole latest-value object;
 * - per step and snapshot, the values of each series over the longest window of that step;
 * - per metric, kind of answer and snapshot, the objects of all its series (for a query asking for
 *   the whole metric, which is what dashboards mostly do), and the objects of the series one
 *   label pattern selects (for a query with one label selector for the metric).
 * Everything per snapshot is dropped when the store commits the next one. Pieces are made on first
 * demand, so series no query asks for cost nothing.
 */
export class SeriesFragments {
  private readonly store: MetricStore;
  private readonly heads: (Buffer | undefined)[] = [];
  /** The label values each head was made for: the store copies them when it interns a series, so a reused id never has the same array. */
  private readonly headLabels: (readonly string[] | undefined)[] = [];
  private seq = -1;
  /** `null`: the series has no sample in the newest snapshot. */
  private latest: (Buffer | null | undefined)[] = [];
  private readonly steps = new Map<number, StepValues>();
  /** History views by tier and step (`minute/300`), at most `MAX_STEPS_PER_SNAPSHOT` as well. */
  private readonly historyViews = new Map<string, HistoryView>();
  /** Per kind of answer, per pattern, per metric and label (see `block`). */
  private readonly blocks = new Map<string, Map<object, Map<number, Buffer>>>();
  private blockBytes = 0;
  /** The memory of this snapshot's blocks, reused for the next one's (block-arena.ts). */
  private readonly arena = new BlockArena(MAX_BLOCK_BYTES);
  /**
   * Memory for a block (`keepBlock`), valid while this snapshot is the
   * newest: a block must be copied into its answer within the call that assembles it.
   */
  readonly allocateBlock = (length: number): Buffer => {
    this.dropIfStale();
    return this.arena.allocate(length);
  };

  constructor(store: MetricStore) {
    this.store = store;
  }

  /** `{"name":…,"labels":{…},"values":[` of a live series. */
  head(id: number): Buffer {
    const labels = this.store.labelsOf(id);
    let head = this.heads[id];
    if (head === undefined || this.headLabels[id] !== labels) {
      const descriptor = CATALOG[this.store.metricOf(id)]!;
      head = Buffer.from(
        `{"name":${JSON.stringify(descriptor.name)},"labels":${labelsJson(descriptor.labels, labels)},"values":[`,
        'utf8',
      );
      this.heads[id] = head;
      this.headLabels[id] = labels;
    }
    return head;
  }

  /** The whole `{…,"values":[[t,v]]}` object of a series in the newest snapshot; undefined when it has no sample there. */
  latestObject(id: number): Buffer | undefined {
    this.dropIfStale();
    let object = this.latest[id];
    if (object === undefined) {
      const seq = this.store.newestSeq;
      const value = this.store.value(id, seq);
      object = Number.isNaN(value)
        ? null
        : Buffer.concat([
            this.head(id),
            Buffer.from(`[${toUnixSeconds(this.store.timeMs(seq))},${formatNumber(value)}]]}`, 'latin1'),
          ]);
      this.latest[id] = object;
    }
    return object ?? undefined;
  }

  /**
   * The values of step `intervalSec`: kept for the snapshot over `maxCount` points (the longest
   * window of that step), or, once this snapshot keeps the most steps it may, made for one answer
   * over its own `count` points. The times of a step's points do not depend on their number, so
   * both give the same pairs for the same point.
   */
  stepValues(intervalSec: number, maxCount: number, count: number): StepValues {
    this.dropIfStale();
    let step = this.steps.get(intervalSec);
    if (step !== undefined) return step;
    if (this.steps.size >= MAX_STEPS_PER_SNAPSHOT)
      return new StepValues(this.store, planPoints(this.store, intervalSec, count));
    step = new StepValues(this.store, planPoints(this.store, intervalSec, maxCount));
    this.steps.set(intervalSec, step);
    return step;
  }

  /**
   * The points of the history range's tier and step (history-view.ts): kept for the snapshot over
   * the longest range that tier answers at that step, or, once this snapshot keeps the most views
   * it may, made for one answer over the range's own points.
   */
  historyView(history: MetricHistory, range: HistoryRange): HistoryView {
    this.dropIfStale();
    const key = `${range.tier.options.name}/${range.intervalSec}`;
    let view = this.historyViews.get(key);
    if (view !== undefined) return view;
    const kept = this.historyViews.size < MAX_STEPS_PER_SNAPSHOT;
    view = new HistoryView(
      this.store,
      history,
      range.tier,
      planPoints(this.store, range.intervalSec, kept ? range.maxCount : range.count),
    );
    if (kept) this.historyViews.set(key, view);
    return view;
  }

  /**
   * The objects of a metric's series in one kind of answer (`variant`: equal variants give equal
   * objects within a snapshot), comma-separated, if kept for this snapshot: of all its series
   * (`WHOLE_METRIC`), or of those whose label at `labelIndex` matches `pattern` (a compiled pattern,
   * the same object for the same source: pattern-cache.ts). Varied queries mostly differ in which
   * metrics and patterns they combine, not in the patterns themselves, so the objects one pattern
   * selects are worth keeping for the snapshot as whole metrics are.
   */
  block(metricIndex: number, variant: string, selected: BlockSelection): Buffer | undefined {
    this.dropIfStale();
    return this.blocks.get(variant)?.get(selected.pattern)?.get(blockKey(metricIndex, selected.labelIndex));
  }

  /** Keeps a block made by the caller, while the blocks of this snapshot stay within their byte bound. */
  keepBlock(metricIndex: number, variant: string, selected: BlockSelection, block: Buffer): void {
    if (!this.fits(block)) return;
    let byPattern = this.blocks.get(variant);
    if (byPattern === undefined) {
      byPattern = new Map();
      this.blocks.set(variant, byPattern);
    }
    let blocks = byPattern.get(selected.pattern);
    if (blocks === undefined) {
      blocks = new Map();
      byPattern.set(selected.pattern, blocks);
    }
    blocks.set(blockKey(metricIndex, selected.labelIndex), block);
  }

  /** Counts `block` against this snapshot's bound if it fits. */
  private fits(block: Buffer): boolean {
    if (this.blockBytes + block.length > MAX_BLOCK_BYTES) return false;
    this.blockBytes += block.length;
    return true;
  }

  private dropIfStale(): void {
    const seq = this.store.newestSeq;
    if (seq === this.seq) return;
    this.seq = seq;
    this.latest = [];
    this.steps.clear();
    this.historyViews.clear();
    this.blocks.clear();
    this.arena.reset();
    this.blockBytes = 0;
  }
}

/** Which of a metric's series a kept block holds (`block`). */
export interface BlockSelection {
  pattern: object;
  /** Position of the label the pattern is matched against; -1 for `WHOLE_METRIC`. */
  labelIndex: number;
}

/** Every series of the metric. */
export const WHOLE_METRIC: BlockSelection = { pattern: {}, labelIndex: -1 };

/** One number per metric and label position (-1 …; a metric has far fewer than 63 labels). */
function blockKey(metricIndex: number, labelIndex: number): number {
  return metricIndex * 64 + labelIndex + 1;
}
