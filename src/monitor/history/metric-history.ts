import type { Logger } from 'pino';
import type { SampleBatch, MetricStore } from '../store/index.js';
import type { SeriesInfo } from './series-kind.js';
import { SeriesSlots } from './series-slots.js';
import { StepAggregator } from './step-aggregator.js';
import { Tier } from './tier.js';
import { pointsBetween, type TierSeries } from './tier-piece.js';
import type { LoggedPoint } from './window-log.js';

export interface HistoryOptions {
  /** Directory of the tiers' files (config `metrics.history.dir`). */
  dir: string;
  /** Retention of the 1-minute tier, days. */
  minuteRetentionDays: number;
  /** Retention of the 1-hour tier, days. */
  hourRetentionDays: number;
  /** Cap on the files' total size, bytes; 0 = none. The oldest sealed file goes first. */
  maxSizeBytes: number;
  logger: Logger;
}

const MINUTE_SEC = 60;
const HOUR_SEC = 3600;
const DAY_SEC = 86_400;
/** A series without samples for this long, and nothing pending, gives its slot back. */
const IDLE_SLOT_SEC = 2 * MINUTE_SEC;

/**
 * Downsampled history of every series (docs/history.md): a 1-minute tier and a 1-hour
 * tier on disk. The collection tick only adds samples to in-memory step aggregates
 * (`ingest`, O(samples), no allocation for known series); once per minute the finished minute is
 * appended to the minute tier (one write) and folded into the hour aggregate; once per hour the
 * finished hour is appended to the hour tier. After a restart the unfinished hour is rebuilt from
 * the minute tier, so a crash loses at most the unfinished minute.
 */
export class MetricHistory {
  readonly minute: Tier;
  readonly hour: Tier;
  private readonly options: HistoryOptions;
  private readonly logger: Logger;
  private readonly minuteAggregate = new StepAggregator();
  private readonly hourAggregate = new StepAggregator();
  private currentMinute = -1;
  private currentHour = -1;

  private readonly slots = new SeriesSlots();

  private writeFailures = 0;
  private failing = false;

  constructor(options: HistoryOptions) {
    this.options = options;
    this.logger = options.logger;
    this.minute = new Tier(
      options.dir,
      {
        name: 'minute',
        stepSec: MINUTE_SEC,
        windowSec: 6 * HOUR_SEC,
        retentionSec: options.minuteRetentionDays * DAY_SEC,
      },
      options.logger,
    );
    this.hour = new Tier(
      options.dir,
      {
        name: 'hour',
        stepSec: HOUR_SEC,
        windowSec: 10 * DAY_SEC,
        retentionSec: options.hourRetentionDays * DAY_SEC,
      },
      options.logger,
    );
  }

  /** Loads both tiers and rebuilds the unfinished hour from the minute tier. */
  load(): void {
    this.minute.load();
    this.hour.load();
    const newestMinute = this.minute.newestStepSec;
    if (newestMinute < 0) return;
    const hourStart = newestMinute - (newestMinute % HOUR_SEC);
    if (this.hour.newestStepSec >= hourStart) return;
    for (const { series, pieces } of this.minute.read(() => true, hourStart, newestMinute).values()) {
      const { timesSec, values } = pointsBetween(pieces, hourStart, newestMinute);
      if (timesSec.length === 0) continue;
      const slot = this.slots.ofSeries(series);
      // Only the API value of a minute is read back (mean or end value); it stands in for all three.
      for (let i = 0; i < timesSec.length; i++)
        this.hourAggregate.add(slot, values[i]!, values[i]!, values[i]!);
      this.slots.touch(slot, newestMinute);
    }
    this.currentHour = hourStart;
  }

  /** Failed appends so far (disk full, permissions); each streak is logged once. */
  get failures(): number {
    return this.writeFailures;
  }

  /** Series the history holds a slot for (bounded: idle series give theirs back). */
  get slotCount(): number {
    return this.slots.count;
  }

  /**
   * Adds a committed snapshot (the hot path, called after `store.commit`). Finishes the previous
   * minute first when `timeMs` is in a later one.
   */
  ingest(timeMs: number, batch: SampleBatch, store: MetricStore): void {
    const nowSec = Math.floor(timeMs / 1000);
    const minute = nowSec - (nowSec % MINUTE_SEC);
    if (minute !== this.currentMinute) {
      if (this.currentMinute >= 0) this.finishMinute();
      this.currentMinute = minute;
    }
    for (let i = 0; i < batch.length; i++) {
      const value = batch.valueAt(i);
      if (!Number.isFinite(value)) continue;
      const slot = this.slots.ofStoreId(store, batch.idAt(i));
      this.minuteAggregate.add(slot, value, value, value);
      this.slots.touch(slot, nowSec);
    }
  }

  /** Writes the unfinished minute (shutdown) and closes the files; the windows go on after a restart. */
  close(): void {
    if (this.currentMinute >= 0 && this.minuteAggregate.size > 0) this.finishMinute();
    this.minute.close();
    this.hour.close();
  }

  /**
   * The finest tier whose retention covers `rangeSec` (the minute tier up to its retention, then
   * the hour tier), or `undefined` beyond the hour tier's.
   */
  tierFor(rangeSec: number): Tier | undefined {
    if (rangeSec <= this.minute.options.retentionSec) return this.minute;
    if (rangeSec <= this.hour.options.retentionSec) return this.hour;
    return undefined;
  }

  /** The longest range the history answers, seconds. */
  get longestRetentionSec(): number {
    return Math.max(this.minute.options.retentionSec, this.hour.options.retentionSec);
  }

  /**
   * The windows of `tier` overlapping [fromSec, toSec] of the series `wants` accepts, plus the
   * unfinished step as a provisional last point (minute tier: the samples of this minute so far;
   * hour tier: the minutes of this hour finished so far), so the newest point of an answer is as
   * fresh as the tier can be.
   */
  read(
    tier: Tier,
    wants: (series: SeriesInfo) => boolean,
    fromSec: number,
    toSec: number,
  ): Map<string, TierSeries> {
    const result = tier.read(wants, fromSec, toSec);
    const isMinute = tier === this.minute;
    const stepStart = isMinute ? this.currentMinute : this.currentHour;
    if (stepStart < 0 || stepStart <= tier.newestStepSec || stepStart > toSec) return result;
    const aggregate = isMinute ? this.minuteAggregate : this.hourAggregate;
    aggregate.peek((slot, mean, _max, last) => {
      const series = this.slots.seriesAt(slot);
      if (!wants(series)) return;
      const piece = {
        startSec: stepStart,
        stepSec: tier.options.stepSec,
        steps: Int32Array.of(0),
        values: Float64Array.of(series.kind === 'gauge' ? mean : last),
      };
      const existing = result.get(series.key);
      if (existing === undefined) result.set(series.key, { series, pieces: [piece] });
      else existing.pieces.push(piece);
    });
    return result;
  }

  /**
   * The series of the metrics `wantsMetric` accepts that `read(tier, …, fromSec, toSec)` may
   * return points for, by key: those of the tier's windows overlapping the range and those of the
   * unfinished step. Nothing is decoded.
   */
  seriesIn(
    tier: Tier,
    fromSec: number,
    toSec: number,
    wantsMetric: (metricIndex: number) => boolean,
  ): Map<string, SeriesInfo> {
    const result = new Map<string, SeriesInfo>();
    tier.seriesIn(fromSec, toSec, wantsMetric, result);
    const isMinute = tier === this.minute;
    const stepStart = isMinute ? this.currentMinute : this.currentHour;
    if (stepStart < 0 || stepStart <= tier.newestStepSec || stepStart > toSec) return result;
    (isMinute ? this.minuteAggregate : this.hourAggregate).peek((slot) => {
      const series = this.slots.seriesAt(slot);
      if (wantsMetric(series.metricIndex)) result.set(series.key, series);
    });
    return result;
  }

  /** Bytes of all history files. */
  get diskBytes(): number {
    return this.minute.diskBytes + this.hour.diskBytes;
  }

  private finishMinute(): void {
    const minute = this.currentMinute;
    const hour = minute - (minute % HOUR_SEC);
    if (hour !== this.currentHour) {
      if (this.currentHour >= 0) this.finishHour();
      this.currentHour = hour;
    }
    const points: LoggedPoint[] = [];
    this.minuteAggregate.drain((slot, mean, max, last) => {
      const series = this.slots.seriesAt(slot);
      points.push({ series, values: series.kind === 'gauge' ? [mean, max] : [last] });
      this.hourAggregate.add(slot, mean, max, last);
    });
    this.write(() => this.minute.appendStep(minute, points));
    this.write(() => this.enforceLimits(minute));
    this.slots.releaseIdle(
      minute - IDLE_SLOT_SEC,
      (slot) => this.hourAggregate.has(slot) || this.minuteAggregate.has(slot),
    );
  }

  private finishHour(): void {
    const points: LoggedPoint[] = [];
    this.hourAggregate.drain((slot, mean, max, last) => {
      const series = this.slots.seriesAt(slot);
      points.push({ series, values: series.kind === 'gauge' ? [mean, max] : [last] });
    });
    const hour = this.currentHour;
    this.write(() => this.hour.appendStep(hour, points));
  }

  /** Retention per tier, then the size cap: the oldest sealed file of either tier goes first. */
  private enforceLimits(nowSec: number): void {
    this.minute.dropExpired(nowSec);
    this.hour.dropExpired(nowSec);
    const cap = this.options.maxSizeBytes;
    if (cap <= 0) return;
    while (this.diskBytes > cap) {
      const minuteOldest = this.minute.oldestSealedSec ?? Number.POSITIVE_INFINITY;
      const hourOldest = this.hour.oldestSealedSec ?? Number.POSITIVE_INFINITY;
      if (minuteOldest === Number.POSITIVE_INFINITY && hourOldest === Number.POSITIVE_INFINITY) return;
      if (hourOldest <= minuteOldest) this.hour.deleteOldest();
      else this.minute.deleteOldest();
    }
  }

  /** Runs a file operation; a failure is counted and logged once per streak, never thrown into the tick. */
  private write(operation: () => unknown): void {
    try {
      operation();
      if (this.failing)
        this.logger.info({ failures: this.writeFailures }, 'metrics history: writing works again');
      this.failing = false;
    } catch (error) {
      this.writeFailures++;
      if (!this.failing) {
        this.logger.error(
          { err: error, failures: this.writeFailures },
          'metrics history: writing failed; points are lost until it works again',
        );
      }
      this.failing = true;
    }
  }
}
