import type { DecodedValues } from './series-chunk.js';
import type { SeriesInfo } from './series-kind.js';

/** The points of one series from one window: step `steps[i]` starts at `startSec + steps[i] · stepSec`. */
export interface TierPiece extends DecodedValues {
  startSec: number;
  stepSec: number;
}

/** Points of one series read from a tier, as pieces oldest first (shared with the cache: read only). */
export interface TierSeries {
  series: SeriesInfo;
  pieces: TierPiece[];
}

/** Adds one window of a series to `result` (windows come oldest first). */
export function addPiece(
  result: Map<string, TierSeries>,
  series: SeriesInfo,
  startSec: number,
  stepSec: number,
  decoded: DecodedValues,
): void {
  if (decoded.steps.length === 0) return;
  let target = result.get(series.key);
  if (target === undefined) {
    target = { series, pieces: [] };
    result.set(series.key, target);
  }
  target.pieces.push({ startSec, stepSec, steps: decoded.steps, values: decoded.values });
}

/** The points of `pieces` with step start in [fromSec, toSec], as plain arrays (oldest first). */
export function pointsBetween(
  pieces: readonly TierPiece[],
  fromSec: number,
  toSec: number,
): { timesSec: number[]; values: number[] } {
  const timesSec: number[] = [];
  const values: number[] = [];
  for (const piece of pieces) {
    for (let i = 0; i < piece.steps.length; i++) {
      const timeSec = piece.startSec + piece.steps[i]! * piece.stepSec;
      if (timeSec < fromSec || timeSec > toSec) continue;
      timesSec.push(timeSec);
      values.push(piece.values[i]!);
    }
  }
  return { timesSec, values };
}
