import { ColumnEncoder, type ColumnPrediction } from './column-codec.js';
import { decodeColumn } from './column-codec.js';

/** The API values of one series in one window: window-relative steps and values, oldest first. */
export interface DecodedValues {
  steps: Int32Array;
  values: Float64Array;
}

/**
 * The points of one series in one window of a tier, one column each: the steps (window-relative
 * step numbers, predicted at a steady gap) and the value columns (gauges: mean and max; counters:
 * the end value). Built point by point while the window is open; sealed as separate sections so a
 * query reads and decodes only the steps and the first column (the value the API answers), and
 * not even the steps when the series has a point every step from its first (dense).
 */
export class SeriesChunkEncoder {
  /** The steps, once a gap made them worth storing (until then they are `firstStep …`). */
  private steps: ColumnEncoder | undefined;
  private readonly columns: ColumnEncoder[];
  readonly predictions: readonly ColumnPrediction[];
  /** Step number of the first point (window-relative), -1 while empty. */
  firstStep = -1;
  private lastStep = -1;
  private count = 0;

  constructor(predictions: readonly ColumnPrediction[]) {
    this.predictions = predictions;
    this.columns = predictions.map((prediction) => new ColumnEncoder(prediction));
  }

  get pointCount(): number {
    return this.count;
  }

  /** Bytes held in memory (for accounting). */
  get memoryBytes(): number {
    let bytes = 64 + (this.steps?.memoryBytes ?? 0);
    for (const column of this.columns) bytes += column.memoryBytes;
    return bytes;
  }

  /**
   * Appends a point at window-relative step `step` (strictly after the previous one; an older or
   * equal step is ignored and `false` returned). `values` has one number per column.
   */
  append(step: number, values: ArrayLike<number>): boolean {
    if (step <= this.lastStep) return false;
    if (this.count === 0) this.firstStep = step;
    else if (this.steps === undefined && step !== this.lastStep + 1) {
      this.steps = new ColumnEncoder('rate');
      for (let earlier = this.firstStep; earlier <= this.lastStep; earlier++) this.steps.append(earlier);
    }
    this.steps?.append(step);
    this.lastStep = step;
    this.count++;
    for (let c = 0; c < this.columns.length; c++) this.columns[c]!.append(values[c]!);
    return true;
  }

  /** The stored sections: the steps (empty when dense), then one per column. */
  sections(): Uint8Array[] {
    const steps = this.steps === undefined ? new Uint8Array(0) : this.steps.finish();
    return [steps, ...this.columns.map((c) => c.finish())];
  }

  /** The points so far, first column (the open window's read path). */
  decode(): DecodedValues {
    const steps = this.steps === undefined ? new Uint8Array(0) : this.steps.finish();
    const into = new Float64Array(this.count);
    return decodeSeriesValues(steps, this.columns[0]!.finish(), this.predictions[0]!, this.firstStep, into);
  }
}

/** Steps 0, 1, 2 … as a shared read-only view: a dense run's steps. */
export function rampOf(count: number): Int32Array {
  if (ramp.length < count) ramp = Int32Array.from({ length: Math.max(count, 2 * ramp.length) }, (_, i) => i);
  return ramp.subarray(0, count);
}

let ramp = new Int32Array(0);

/**
 * Decodes a series' steps (from `stepBytes`, or `firstStep …` when empty) and its first column
 * into `values` (one per point). Throws when the steps are not increasing from `firstStep` (a
 * corrupt chunk).
 */
function decodeSeriesValues(
  stepBytes: Uint8Array,
  valueBytes: Uint8Array,
  prediction: ColumnPrediction,
  firstStep: number,
  values: Float64Array,
): DecodedValues {
  const count = values.length;
  decodeColumn(valueBytes, prediction, values);
  if (stepBytes.length === 0) return { steps: rampOf(firstStep + count).subarray(firstStep), values };
  const steps = new Int32Array(count);
  decodeSteps(stepBytes, firstStep, steps, 0, count, 0);
  return { steps, values };
}

/** Decoded steps columns are read through this scratch (decoding is synchronous). */
let stepScratch = new Float64Array(1024);

/**
 * Decodes the `count` steps of a steps section (window-relative, from `firstStep`) into
 * `out[from …]`, each plus `add`. Throws when they are not increasing from `firstStep` or do not
 * fit (a corrupt chunk).
 */
export function decodeSteps(
  stepBytes: Uint8Array,
  firstStep: number,
  out: Int32Array,
  from: number,
  count: number,
  add: number,
): void {
  if (stepScratch.length < count) stepScratch = new Float64Array(Math.max(count, 2 * stepScratch.length));
  const decoded = stepScratch;
  decodeColumn(stepBytes, 'rate', decoded, 0, count);
  let previous = firstStep - 1;
  for (let i = 0; i < count; i++) {
    const step = decoded[i]!;
    if (!(step > previous) || step + add > 0x7fffffff || (i === 0 && step !== firstStep))
      throw new RangeError('corrupt chunk: steps out of order');
    out[from + i] = step + add;
    previous = step;
  }
}
