import type { MetricStore } from '../store/index.js';
import { describeSeries, type SeriesInfo } from './series-kind.js';

/**
 * The history's own numbering of series (slots index the step aggregates' typed arrays),
 * independent of the raw store's ids, which are reused. A slot is looked up from a store id in
 * O(1) on the collection tick while the store holds the same label array at that id; slots of
 * series that went idle are given back, so series that come and go do not grow the arrays.
 */
export class SeriesSlots {
  private readonly slots: (SeriesInfo | undefined)[] = [];
  private readonly slotByKey = new Map<string, number>();
  private readonly freeSlots: number[] = [];
  private readonly lastSeenSec: number[] = [];
  private readonly storeIdOfSlot: number[] = [];
  // Raw store id → slot, valid while the store still holds the same label array at that id.
  private readonly slotByStoreId: number[] = [];
  private readonly labelsByStoreId: (readonly string[] | undefined)[] = [];

  /** Slots in use. */
  get count(): number {
    return this.slotByKey.size;
  }

  /** The series of a slot in use. */
  seriesAt(slot: number): SeriesInfo {
    return this.slots[slot]!;
  }

  /** Records a sample of `slot` at `nowSec` (idle slots are given back). */
  touch(slot: number, nowSec: number): void {
    this.lastSeenSec[slot] = nowSec;
  }

  /** The slot of the series at store id `id` (the hot path: no allocation for a known series). */
  ofStoreId(store: MetricStore, id: number): number {
    const labels = store.labelsOf(id);
    if (this.labelsByStoreId[id] === labels) {
      const slot = this.slotByStoreId[id]!;
      if (slot >= 0) return slot;
    }
    const slot = this.ofSeries(describeSeries(store.metricOf(id), labels));
    this.slotByStoreId[id] = slot;
    this.labelsByStoreId[id] = labels;
    this.storeIdOfSlot[slot] = id;
    return slot;
  }

  /** The slot of `series`, taken now if it has none. */
  ofSeries(series: SeriesInfo): number {
    const existing = this.slotByKey.get(series.key);
    if (existing !== undefined) return existing;
    const slot = this.freeSlots.pop() ?? this.slots.length;
    this.slots[slot] = series;
    this.slotByKey.set(series.key, slot);
    this.storeIdOfSlot[slot] = -1;
    this.lastSeenSec[slot] = 0;
    return slot;
  }

  /** Gives back the slots without a sample since `idleBeforeSec` for which `pending` is false. */
  releaseIdle(idleBeforeSec: number, pending: (slot: number) => boolean): void {
    for (let slot = 0; slot < this.slots.length; slot++) {
      const series = this.slots[slot];
      if (series === undefined || this.lastSeenSec[slot]! > idleBeforeSec || pending(slot)) continue;
      this.slots[slot] = undefined;
      this.slotByKey.delete(series.key);
      const storeId = this.storeIdOfSlot[slot]!;
      if (storeId >= 0 && this.slotByStoreId[storeId] === slot) {
        this.slotByStoreId[storeId] = -1;
        this.labelsByStoreId[storeId] = undefined;
      }
      this.freeSlots.push(slot);
    }
  }
}
