import type { MetricHistory } from '../history/index.js';
import type { MetricStore } from '../store/index.js';
import type { QueryDeadline } from './deadline.js';
import { answerHead, METRICS_IN_NAME_ORDER, SERIES_PER_DEADLINE_CHECK } from './answer-text.js';
import type { MetricsQuery } from './parse.js';
import {
  historyRangeOf,
  maxPointsOf,
  pointCountOf,
  stepOf,
  type HistoryRange,
  type Retention,
} from './point-plan.js';
import type { SeriesSelection } from './select.js';
import type { HistoryEntry } from './history-view.js';
import {
  WHOLE_METRIC,
  type BlockSelection,
  type SeriesFragments,
  type StepValues,
} from './series-fragments.js';

const COMMA = Buffer.from(',');
const SERIES_END = Buffer.from(']}');
const ANSWER_END = Buffer.from(']}');
const allocateUnpooled = (length: number): Buffer => Buffer.allocUnsafe(length);

/** An answer's bytes; `fromHistory`: its range reached past the raw window (a history tier answered). */
export interface AssembledAnswer {
  bytes: Buffer;
  fromHistory: boolean;
}

/**
 * The answer of a query (docs/metrics.md#post-apiv3metrics-the-query), assembled from encoded
 * fragments (series-fragments.ts): per matching series, its latest-value object, or its head, the
 * tail of its encoded values and `]}`. No number is formatted twice within a snapshot and no
 * object is built per request; the request's own work is selecting series and copying bytes. The
 * tests compare its bytes with a plain evaluation that formats every point
 * (test/monitor/support/plain-evaluation.ts) on thousands of random queries.
 *
 * The objects come from one `SeriesSource` per answer, so a second source of points (for example
 * history kept at a coarser step) can answer a series the same way.
 *
 * `head` starts an answer from the raw window (the configured window and interval, `answerHead`);
 * an answer from a history tier starts with the range and step it used instead. `allocate` gives
 * the memory of the answer itself (answer-buffers.ts). Resolves at once unless the range reads the
 * history's files.
 */
export async function assembleAnswer(
  store: MetricStore,
  retention: Retention,
  fragments: SeriesFragments,
  head: Buffer,
  query: MetricsQuery,
  selection: SeriesSelection,
  deadline: QueryDeadline,
  history?: MetricHistory,
  allocate: (length: number) => Buffer = allocateUnpooled,
): Promise<AssembledAnswer> {
  const writer = new AnswerWriter(allocate);
  const historyRange =
    store.snapshotCount === 0 ? undefined : historyRangeOf(query, retention, store, history);
  if (historyRange !== undefined) {
    writer.push(Buffer.from(answerHead(historyRange)));
    const bytes = await assembleHistory(writer, fragments, history!, historyRange, selection, deadline);
    return { bytes, fromHistory: true };
  }
  writer.push(head);
  if (store.snapshotCount === 0) {
    writer.push(ANSWER_END);
    return { bytes: writer.toBuffer(), fromHistory: false };
  }
  let source: SeriesSource;
  if (query.timerangeSec === undefined) {
    source = new LatestValues(fragments);
  } else {
    const intervalSec = stepOf(query, retention);
    const count = pointCountOf(query, retention, store);
    const step = fragments.stepValues(intervalSec, maxPointsOf(intervalSec, retention, store), count);
    source = new StepTail(fragments, step, step.count - count);
  }
  const walk = new SeriesWalk(store, selection, source, deadline);
  for (const metricIndex of METRICS_IN_NAME_ORDER) {
    if (!selection.wantsMetric(metricIndex)) continue;
    const block = keptBlock(fragments, walk, selection, source.variant, metricIndex);
    if (block === undefined) walk.write(metricIndex, writer, false);
    else writer.pushObjects(block);
  }
  writer.push(ANSWER_END);
  return { bytes: writer.toBuffer(), fromHistory: false };
}

/** Stands for the empty pattern (any value) where a kept block is looked up by pattern. */
const ANY_VALUE = {};

/**
 * The objects of a metric's selected series as one block kept for the snapshot (made on first
 * demand), when the query selects the whole metric or the series one label pattern matches;
 * undefined for any other selection (several items or selectors for the metric).
 */
function keptBlock(
  fragments: SeriesFragments,
  walk: SeriesWalk,
  selection: SeriesSelection,
  variant: string,
  metricIndex: number,
): Buffer | undefined {
  const all = selection.wantsAll(metricIndex);
  const selector = all ? undefined : selection.onlySelector(metricIndex);
  if (!all && selector === undefined) return undefined;
  const selected: BlockSelection =
    selector === undefined
      ? WHOLE_METRIC
      : { pattern: selector.regexp ?? ANY_VALUE, labelIndex: selector.labelIndex };
  let block = fragments.block(metricIndex, variant, selected);
  if (block === undefined) {
    block = walk.block(metricIndex, all, fragments.allocateBlock);
    fragments.keepBlock(metricIndex, variant, selected, block);
  }
  return block;
}

/**
 * A range past the raw window: the series of the history view (store and tier together), each
 * object its head, the tail of its encoded pairs from the query's first point, and `]}`.
 */
async function assembleHistory(
  writer: AnswerWriter,
  fragments: SeriesFragments,
  history: MetricHistory,
  range: HistoryRange,
  selection: SeriesSelection,
  deadline: QueryDeadline,
): Promise<Buffer> {
  const view = fragments.historyView(history, range);
  const first = view.count - range.count;
  const lists = await view.seriesFrom(first, (metricIndex) => selection.wantsMetric(metricIndex));
  const chosen: HistoryEntry[] = [];
  let seen = 0;
  for (const metricIndex of METRICS_IN_NAME_ORDER) {
    const entries = lists[metricIndex];
    if (entries === undefined) continue;
    const all = selection.wantsAll(metricIndex);
    for (const entry of entries) {
      if (++seen % SERIES_PER_DEADLINE_CHECK === 0) deadline.check();
      if (all || selection.matches(metricIndex, entry.labelValues)) chosen.push(entry);
    }
  }
  await view.encodeFrom(chosen, first);
  deadline.check();
  for (const entry of chosen) {
    const start = entry.starts[first - entry.from]!;
    if (start === entry.bytes.length) continue;
    writer.pushSeries(entry.head, entry.bytes, start + 1);
  }
  writer.push(ANSWER_END);
  return writer.toBuffer();
}

/** Where the object of one series in an answer comes from. */
interface SeriesSource {
  /** Names the kind of answer: equal variants give equal objects within a snapshot. */
  readonly variant: string;
  /** Writes the object of series `id` to `out`, unless it has no point in the answer. */
  write(id: number, out: AnswerWriter): void;
}

/** Latest-value mode: the series' whole object for the newest snapshot. */
class LatestValues implements SeriesSource {
  readonly variant = 'latest';
  private readonly fragments: SeriesFragments;

  constructor(fragments: SeriesFragments) {
    this.fragments = fragments;
  }

  write(id: number, out: AnswerWriter): void {
    out.pushObject(this.fragments.latestObject(id));
  }
}

/** Time-series mode: the series' head, the last points of its encoded values from point `first` on, `]}`. */
class StepTail implements SeriesSource {
  readonly variant: string;
  private readonly fragments: SeriesFragments;
  private readonly step: StepValues;
  private readonly first: number;

  constructor(fragments: SeriesFragments, step: StepValues, first: number) {
    this.fragments = fragments;
    this.step = step;
    this.first = first;
    // Named by the step and the number of points, not by `first`: a step made for one answer
    // (series-fragments.ts) has its own, shorter plan, whose tail is the same points.
    this.variant = `${step.plan.intervalSec}/${step.count - first}`;
  }

  write(id: number, out: AnswerWriter): void {
    const { bytes, starts } = this.step.of(id);
    const start = starts[this.first]!;
    if (start === bytes.length) return;
    out.pushSeries(this.fragments.head(id), bytes, start + 1);
  }
}

/** The matching series of a metric, in order, each written by the source; looks at the clock now and then. */
class SeriesWalk {
  private seen = 0;
  private readonly store: MetricStore;
  private readonly selection: SeriesSelection;
  private readonly source: SeriesSource;
  private readonly deadline: QueryDeadline;

  constructor(store: MetricStore, selection: SeriesSelection, source: SeriesSource, deadline: QueryDeadline) {
    this.store = store;
    this.selection = selection;
    this.source = source;
    this.deadline = deadline;
  }

  /** The objects `write` would write, comma-separated, in a buffer of their own. */
  block(metricIndex: number, all: boolean, allocate: (length: number) => Buffer): Buffer {
    const out = new AnswerWriter(allocate);
    this.write(metricIndex, out, all);
    return out.toBuffer();
  }

  /** `all`: every series of the metric matches (no label selection to test). */
  write(metricIndex: number, out: AnswerWriter, all: boolean): void {
    for (const id of this.store.seriesOf(metricIndex)) {
      if (++this.seen % SERIES_PER_DEADLINE_CHECK === 0) this.deadline.check();
      if (all || this.selection.matches(metricIndex, this.store.labelsOf(id))) this.source.write(id, out);
    }
  }
}

/** Byte ranges collected first, then copied once into a buffer of the exact length. */
class AnswerWriter {
  private readonly allocate: (length: number) => Buffer;
  private readonly buffers: Buffer[] = [];
  private readonly starts: number[] = [];
  private length = 0;
  private objects = 0;

  constructor(allocate: (length: number) => Buffer) {
    this.allocate = allocate;
  }

  push(buffer: Buffer, start = 0): void {
    this.buffers.push(buffer);
    this.starts.push(start);
    this.length += buffer.length - start;
  }

  /** One complete series object, comma-separated from the previous one. */
  pushObject(object: Buffer | undefined): void {
    if (object === undefined) return;
    if (this.objects++ > 0) this.push(COMMA);
    this.push(object);
  }

  /** Comma-separated series objects (none when empty). */
  pushObjects(objects: Buffer): void {
    if (objects.length === 0) return;
    if (this.objects++ > 0) this.push(COMMA);
    this.push(objects);
  }

  /** A series object made of its head, `values[start …]` and the closing `]}`. */
  pushSeries(head: Buffer, values: Buffer, start: number): void {
    if (this.objects++ > 0) this.push(COMMA);
    this.push(head);
    this.push(values, start);
    this.push(SERIES_END);
  }

  toBuffer(): Buffer {
    const out = this.allocate(this.length);
    // `set` rather than `Buffer#copy`: an answer has dozens of small pieces, and `copy`'s argument
    // handling cost about as much as the copying.
    let offset = 0;
    for (let i = 0; i < this.buffers.length; i++) {
      const buffer = this.buffers[i]!;
      const start = this.starts[i]!;
      out.set(start === 0 ? buffer : buffer.subarray(start), offset);
      offset += buffer.length - start;
    }
    return out;
  }
}
