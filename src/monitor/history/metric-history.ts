import type { Logger } from 'pino';
import type { SampleBatch, MetricStore } from '../store/index.js';
import { DiskQueue } from './disk-queue.js';
import type { SeriesInfo } from './series-kind.js';
import { SeriesSlots } from './series-slots.js';
import { StepAggregator } from './step-aggregator.js';
import { Tier } from './tier.js';
import { pointsBetween, type TierPiece, type TierSeries } from './tier-piece.js';
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
 *
 * The tick never waits on the disk: a finished step is queued (`DiskQueue`, one file operation at
 * a time, in order) and answers queries from memory until its tier holds it (docs/history.md, The
 * event loop and the disk). `settled()` waits for the queue; `close()` flushes it.
 *
 * About 360 lines because reading and writing share the one pair of tiers and the in-memory steps
 * not yet on disk: a read must see a queued step until its tier holds it, so both sides stay here;
 * the tiers' files, the queue and the aggregates are modules of their own.
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
  private readonly disk = new DiskQueue((error) => this.settle(error));
  /** `load` finished (the unfinished hour rebuilt): `ingest` keeps samples only from then on. */
  private loaded = false;
  /** Finished steps queued for a tier and not yet in it, oldest first. */
  private readonly queued: QueuedStep[] = [];

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

  /**
   * Loads both tiers (synchronously: start-up, before the server listens), then rebuilds the
   * unfinished hour from the minute tier (reading through the thread pool). Ingest only after it
   * resolved: the rebuilt minutes must come before the new ones.
   */
  async load(): Promise<void> {
    this.minute.load();
    this.hour.load();
    const newestMinute = this.minute.newestStepSec;
    const hourStart = newestMinute - (newestMinute % HOUR_SEC);
    if (newestMinute < 0 || this.hour.newestStepSec >= hourStart) {
      this.loaded = true;
      return;
    }
    try {
      const minutes = await this.minute.read(() => true, hourStart, newestMinute);
      for (const { series, pieces } of minutes.values()) {
        const { timesSec, values } = pointsBetween(pieces, hourStart, newestMinute);
        if (timesSec.length === 0) continue;
        const slot = this.slots.ofSeries(series);
        // Only the API value of a minute is read back (mean or end value); it stands in for all three.
        for (let i = 0; i < timesSec.length; i++)
          this.hourAggregate.add(slot, values[i]!, values[i]!, values[i]!);
        this.slots.touch(slot, newestMinute);
      }
      this.currentHour = hourStart;
    } finally {
      // Also when the read failed: the history goes on without the rebuilt minutes.
      this.loaded = true;
    }
  }

  /** Resolves once the file operations queued so far have run (never rejects). */
  settled(): Promise<void> {
    return this.disk.settled();
  }

  /** Failed file operations so far (disk full, permissions); each streak is logged once. */
  get failures(): number {
    return this.writeFailures;
  }

  /** Series the history holds a slot for (bounded: idle series give theirs back). */
  get slotCount(): number {
    return this.slots.count;
  }

  /**
   * Adds a committed snapshot (the hot path, called after `store.commit`). Finishes the previous
   * minute first when `timeMs` is in a later one. Ignored until `load` resolved (the monitor waits
   * for it before its first snapshot; the rebuilt minutes must come first).
   */
  ingest(timeMs: number, batch: SampleBatch, store: MetricStore): void {
    if (!this.loaded) return;
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

  /**
   * Writes the unfinished minute (shutdown), waits for everything queued, and closes the files; the
   * windows go on after a restart.
   */
  async close(): Promise<void> {
    if (this.currentMinute >= 0 && this.minuteAggregate.size > 0) this.finishMinute();
    this.disk.run(() => this.minute.close());
    this.disk.run(() => this.hour.close());
    await this.disk.settled();
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
   * fresh as the tier can be. Finished steps still queued for the tier come from memory. All of
   * it as of the call (the tier's part is taken before the read first waits).
   */
  async read(
    tier: Tier,
    wants: (series: SeriesInfo) => boolean,
    fromSec: number,
    toSec: number,
  ): Promise<Map<string, TierSeries>> {
    const reading = tier.read(wants, fromSec, toSec);
    const recent = new Map<string, TierSeries>();
    const stepSec = tier.options.stepSec;
    const newest = this.forEachQueued(tier, toSec, (startSec, { series, values }) => {
      if (wants(series)) addPoint(recent, series, pointAt(startSec, stepSec, values[0]!));
    });
    const stepStart = tier === this.minute ? this.currentMinute : this.currentHour;
    if (stepStart >= 0 && stepStart > newest && stepStart <= toSec) {
      const aggregate = tier === this.minute ? this.minuteAggregate : this.hourAggregate;
      aggregate.peek((slot, mean, _max, last) => {
        const series = this.slots.seriesAt(slot);
        if (wants(series))
          addPoint(recent, series, pointAt(stepStart, stepSec, series.kind === 'gauge' ? mean : last));
      });
    }
    const result = await reading;
    for (const { series, pieces } of recent.values())
      for (const piece of pieces) addPoint(result, series, piece);
    return result;
  }

  /**
   * The series of the metrics `wantsMetric` accepts that `read(tier, …, fromSec, toSec)` may
   * return points for, by key: those of the tier's windows overlapping the range and those of the
   * unfinished step (and of the finished steps still queued for the tier). Nothing is decoded.
   */
  async seriesIn(
    tier: Tier,
    fromSec: number,
    toSec: number,
    wantsMetric: (metricIndex: number) => boolean,
  ): Promise<Map<string, SeriesInfo>> {
    const result = new Map<string, SeriesInfo>();
    const reading = tier.seriesIn(fromSec, toSec, wantsMetric, result);
    const recent = new Map<string, SeriesInfo>();
    const newest = this.forEachQueued(tier, toSec, (_startSec, { series }) => {
      if (wantsMetric(series.metricIndex)) recent.set(series.key, series);
    });
    const isMinute = tier === this.minute;
    const stepStart = isMinute ? this.currentMinute : this.currentHour;
    if (stepStart >= 0 && stepStart > newest && stepStart <= toSec) {
      (isMinute ? this.minuteAggregate : this.hourAggregate).peek((slot) => {
        const series = this.slots.seriesAt(slot);
        if (wantsMetric(series.metricIndex)) recent.set(series.key, series);
      });
    }
    await reading;
    for (const [key, series] of recent) result.set(key, series);
    return result;
  }

  /**
   * Calls `visit` for each point of the steps queued for `tier` that it does not hold yet and that
   * start at or before `toSec`, oldest first (a step the tier will refuse, at or before a newer one,
   * is left out as the tier leaves it out). Returns the start of the newest such step, or of the
   * tier's newest point.
   */
  private forEachQueued(
    tier: Tier,
    toSec: number,
    visit: (startSec: number, point: LoggedPoint) => void,
  ): number {
    let newest = tier.newestStepSec;
    for (const step of this.queued) {
      if (step.tier !== tier || step.startSec <= newest) continue;
      newest = step.startSec;
      if (step.startSec <= toSec) for (const point of step.points) visit(step.startSec, point);
    }
    return newest;
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
    this.queueStep(this.minute, minute, points);
    this.disk.run(() => this.enforceLimits(minute));
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
    this.queueStep(this.hour, this.currentHour, points);
  }

  /** Queues a finished step for its tier; queries answer it from `queued` until the tier holds it. */
  private queueStep(tier: Tier, startSec: number, points: LoggedPoint[]): void {
    const step = { tier, startSec, points };
    this.queued.push(step);
    this.disk.run(async () => {
      try {
        await tier.appendStep(startSec, points);
      } finally {
        this.queued.splice(this.queued.indexOf(step), 1);
      }
    });
  }

  /** Retention per tier, then the size cap: the oldest sealed file of either tier goes first. */
  private async enforceLimits(nowSec: number): Promise<void> {
    await this.minute.dropExpired(nowSec);
    await this.hour.dropExpired(nowSec);
    const cap = this.options.maxSizeBytes;
    if (cap <= 0) return;
    while (this.diskBytes > cap) {
      const minuteOldest = this.minute.oldestSealedSec ?? Number.POSITIVE_INFINITY;
      const hourOldest = this.hour.oldestSealedSec ?? Number.POSITIVE_INFINITY;
      if (minuteOldest === Number.POSITIVE_INFINITY && hourOldest === Number.POSITIVE_INFINITY) return;
      if (hourOldest <= minuteOldest) await this.hour.deleteOldest();
      else await this.minute.deleteOldest();
    }
  }

  /** The outcome of a queued file operation: a failure is counted and logged once per streak. */
  private settle(error: unknown): void {
    if (error === undefined) {
      if (this.failing)
        this.logger.info({ failures: this.writeFailures }, 'metrics history: writing works again');
      this.failing = false;
    } else {
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

/** A finished step queued for a tier (`startSec`: its start, Unix seconds). */
interface QueuedStep {
  tier: Tier;
  startSec: number;
  points: LoggedPoint[];
}

/** A one-point piece: the step starting at `startSec`. */
function pointAt(startSec: number, stepSec: number, value: number): TierPiece {
  return { startSec, stepSec, steps: Int32Array.of(0), values: Float64Array.of(value) };
}

/** Adds `piece` after the series' other pieces in `result`. */
function addPoint(result: Map<string, TierSeries>, series: SeriesInfo, piece: TierPiece): void {
  const existing = result.get(series.key);
  if (existing === undefined) result.set(series.key, { series, pieces: [piece] });
  else existing.pieces.push(piece);
}
