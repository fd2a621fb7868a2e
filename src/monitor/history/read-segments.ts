import type { DecodedFile } from './decoded-cache.js';
import { rampOf } from './series-chunk.js';
import type { TierPiece } from './tier-piece.js';

/**
 * The query's runs of points in file order, one per file and series: `count` values from
 * `values[at]`, steps dense from the absolute step `firstStep` or stored (`steps[stepsAt …]`
 * relative to `baseStep`), at `stepSec`.
 */
export class Segments {
  length = 0;
  slot = new Int32Array(0);
  position = new Int32Array(0);
  values: Float64Array[] = [];
  at = new Int32Array(0);
  count = new Int32Array(0);
  firstStep = new Float64Array(0);
  steps: (Int32Array | undefined)[] = [];
  stepsAt = new Int32Array(0);
  baseStep = new Float64Array(0);
  stepSec = new Float64Array(0);

  /** Empty, with room for `capacity` segments (the buffers' references of the last query dropped). */
  reset(capacity: number): this {
    this.length = 0;
    this.values.length = 0;
    this.steps.length = 0;
    if (this.slot.length >= capacity) return this;
    const size = 2 * capacity;
    this.slot = new Int32Array(size);
    this.position = new Int32Array(size);
    this.at = new Int32Array(size);
    this.count = new Int32Array(size);
    this.firstStep = new Float64Array(size);
    this.stepsAt = new Int32Array(size);
    this.baseStep = new Float64Array(size);
    this.stepSec = new Float64Array(size);
    return this;
  }

  /** The segments from `from` on (one file's decoded ones), as a cache entry of that file. */
  toCache(from: number): DecodedFile {
    const n = this.length - from;
    const entryOf = new Map<number, number>();
    for (let e = 0; e < n; e++) entryOf.set(this.position[from + e]!, e);
    return {
      entryOf,
      values: this.values.slice(from, this.length),
      at: this.at.slice(from, this.length),
      count: this.count.slice(from, this.length),
      firstStep: this.firstStep.slice(from, this.length),
      steps: this.steps.slice(from, this.length),
      stepsAt: this.stepsAt.slice(from, this.length),
      baseStep: this.baseStep.slice(from, this.length),
    };
  }
}

/** Adds the segments of the wanted positions of a file that the cache holds. */
export function useCached(
  stepSec: number,
  pairs: Int32Array,
  cached: readonly DecodedFile[] | undefined,
  segments: Segments,
): void {
  if (cached === undefined) return;
  for (let p = 0; p < pairs.length; p += 2) {
    const position = pairs[p]!;
    for (let d = 0; d < cached.length; d++) {
      const decoded = cached[d]!;
      const e = decoded.entryOf.get(position);
      if (e === undefined) continue;
      const s = segments.length++;
      segments.slot[s] = pairs[p + 1]!;
      segments.position[s] = position;
      segments.values[s] = decoded.values[e]!;
      segments.at[s] = decoded.at[e]!;
      segments.count[s] = decoded.count[e]!;
      segments.firstStep[s] = decoded.firstStep[e]!;
      segments.steps[s] = decoded.steps[e];
      segments.stepsAt[s] = decoded.stepsAt[e]!;
      segments.baseStep[s] = decoded.baseStep[e]!;
      segments.stepSec[s] = stepSec;
      break;
    }
  }
}

/**
 * The pieces of each series: its segments in file order, those that continue each other in one
 * buffer (values back to back, steps dense and consecutive or stored back to back) joined.
 */
export function assemblePieces(segments: Segments, slots: number): TierPiece[][] {
  const pieces: TierPiece[][] = [];
  for (let slot = 0; slot < slots; slot++) pieces.push([]);
  // Per series: the segment that starts its open run, and where the run ends so far.
  const runStart = new Int32Array(slots).fill(-1);
  const runEnd = new Int32Array(slots);
  const runStepsEnd = new Int32Array(slots);
  for (let s = 0; s < segments.length; s++) {
    const slot = segments.slot[s]!;
    const start = runStart[slot]!;
    const count = segments.count[s]!;
    const steps = segments.steps[s];
    if (
      start >= 0 &&
      segments.values[s] === segments.values[start] &&
      segments.at[s] === runEnd[slot] &&
      segments.stepSec[s] === segments.stepSec[start] &&
      (steps === undefined
        ? segments.steps[start] === undefined &&
          segments.firstStep[s] === segments.firstStep[start]! + (runEnd[slot]! - segments.at[start]!)
        : steps === segments.steps[start] &&
          segments.stepsAt[s] === runStepsEnd[slot] &&
          segments.baseStep[s] === segments.baseStep[start])
    ) {
      runEnd[slot] = runEnd[slot]! + count;
      if (steps !== undefined) runStepsEnd[slot] = runStepsEnd[slot]! + count;
      continue;
    }
    if (start >= 0) pieces[slot]!.push(pieceOf(segments, start, runEnd[slot]!, runStepsEnd[slot]!));
    runStart[slot] = s;
    runEnd[slot] = segments.at[s]! + count;
    runStepsEnd[slot] = segments.stepsAt[s]! + (steps === undefined ? 0 : count);
  }
  for (let slot = 0; slot < slots; slot++) {
    const start = runStart[slot]!;
    if (start >= 0) pieces[slot]!.push(pieceOf(segments, start, runEnd[slot]!, runStepsEnd[slot]!));
  }
  return pieces;
}

/** The run from segment `start` to value `end` (and stored step `stepsEnd`) as a piece. */
function pieceOf(segments: Segments, start: number, end: number, stepsEnd: number): TierPiece {
  const buffer = segments.values[start]!;
  const from = segments.at[start]!;
  const values = from === 0 && end === buffer.length ? buffer : buffer.subarray(from, end);
  const stepSec = segments.stepSec[start]!;
  const steps = segments.steps[start];
  if (steps === undefined)
    return { startSec: segments.firstStep[start]! * stepSec, stepSec, steps: rampOf(end - from), values };
  const stepsFrom = segments.stepsAt[start]!;
  return {
    startSec: segments.baseStep[start]! * stepSec,
    stepSec,
    steps: stepsFrom === 0 && stepsEnd === steps.length ? steps : steps.subarray(stepsFrom, stepsEnd),
    values,
  };
}
