/** The time ranges the picker offers, and the step each one is drawn with. */

export interface TimeRange {
  /** The picker's label and the URL hash value. */
  id: string;
  label: string;
  seconds: number;
}

export const RANGES: readonly TimeRange[] = [
  { id: '15m', label: '15 min', seconds: 15 * 60 },
  { id: '1h', label: '1 h', seconds: 3600 },
  { id: '24h', label: '24 h', seconds: 86_400 },
  { id: '7d', label: '7 d', seconds: 7 * 86_400 },
  { id: '30d', label: '30 d', seconds: 30 * 86_400 },
  { id: '1y', label: '1 y', seconds: 365 * 86_400 },
];

export const DEFAULT_RANGE: TimeRange = RANGES[0]!;

/** Steps a chart may use, seconds; whole minutes and hours line up with the history tiers. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];
/** About this many points per chart: more than a phone's width in pixels would not show. */
const TARGET_POINTS = 360;

/** The step for a range: the smallest listed step at least the collection interval that keeps the points near the target. */
export function stepFor(rangeSec: number, collectionIntervalSec: number): number {
  const wanted = Math.max(collectionIntervalSec, rangeSec / TARGET_POINTS);
  return STEPS.find((step) => step >= wanted) ?? STEPS[STEPS.length - 1]!;
}

export function rangeById(id: string | null | undefined): TimeRange {
  return RANGES.find((range) => range.id === id) ?? DEFAULT_RANGE;
}
