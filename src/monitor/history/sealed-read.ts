import { decodeBlockColumn } from './block-column.js';
import type { DecodedCache, DecodedFile } from './decoded-cache.js';
import { checksum } from './record-frame.js';
import { assemblePieces, Segments, useCached } from './read-segments.js';
import { decodeSteps } from './series-chunk.js';
import { readSpan } from './segment-file.js';
import {
  COUNT,
  FIELDS,
  FIRST_STEP,
  FLAG_RATE,
  FLAG_READABLE,
  FLAGS,
  OFFSET,
  STEPS_CRC,
  STEPS_LENGTH,
  VALUES_CRC,
  VALUES_LENGTH,
  type SegmentIndex,
} from './segment-index.js';
import type { SeriesInfo } from './series-kind.js';
import type { TierSeries } from './tier-piece.js';

/**
 * Reading the series of a query from sealed files (docs/history.md#queries-which-tier-answers-which-range).
 *
 * Everything is sized from the indexes before anything is decoded: each series gets one
 * `Float64Array` for the points no cache holds, and each file's sections are decoded straight into
 * it, back to back, so a year of a series comes back as one piece (a view of the cache's entries
 * where they continue each other in one buffer). A file is read with one `read` of the span of
 * the sections it needs (through the thread pool), each file's span a part of one buffer of the
 * query; every file is read before anything is decoded, so the decoding pass, which uses state
 * kept for the process, never waits and never interleaves with another query's. Each section is
 * checked against its CRC.
 *
 * The loops over the series of a file run once per file and series (a year of 100 hourly series
 * is 3 700), so they touch typed arrays and arrays only: an object that lives for one query has
 * a hidden class the engine may drop at the next full GC, and optimised code that relied on it
 * is then thrown away, which made the first query after a GC run unoptimised.
 *
 * Why one file of about 300 lines: sizing, decoding and caching share the per-query state (the
 * wanted pairs, the fill counters, the segments) and are one pass; read-segments.ts holds what a
 * cached read and the assembly of pieces need apart from it.
 */

/** A sealed file to read, oldest first. */
export interface FileToRead {
  path: string;
  index: SegmentIndex;
}

/** A file that cannot be read at all (gone, not readable); the read can go on without it. */
export class DamagedFile extends Error {
  readonly path: string;
  constructor(path: string, cause: unknown) {
    super((cause as Error).message);
    this.path = path;
  }
}

/**
 * Reads the series `wants` accepts from `files` (oldest first) into `result`, using and filling
 * `cache`. A series whose sections fail their checksum, do not decode or lie past the end of the
 * file is left out of this file's points and reported to `onDamaged`. Throws `DamagedFile` for a
 * file that cannot be read at all; the caller drops it and reads again (what the other files
 * decoded is cached by then).
 */
export async function readSealed(
  files: readonly FileToRead[],
  wants: (series: SeriesInfo) => boolean,
  cache: DecodedCache,
  result: Map<string, TierSeries>,
  onDamaged: (file: FileToRead, position: number, problem: string) => void,
): Promise<void> {
  // The wanted positions of each series table (files of a tier mostly share one), as
  // (position, series slot) pairs; slots number the query's series.
  const slotOfKey = new Map<string, number>();
  const slotSeries: SeriesInfo[] = [];
  const pairsOfTable = new Map<readonly (SeriesInfo | undefined)[], Int32Array>();
  const pairs: Int32Array[] = [];
  const cached: (readonly DecodedFile[] | undefined)[] = [];
  let segmentCapacity = 0;
  for (const { index, path } of files) {
    let tablePairs = pairsOfTable.get(index.series);
    if (tablePairs === undefined) {
      tablePairs = wantedPairs(index.series, wants, slotOfKey, slotSeries);
      pairsOfTable.set(index.series, tablePairs);
    }
    pairs.push(tablePairs);
    cached.push(cache.fileOf(path));
    segmentCapacity += tablePairs.length / 2;
  }
  const slots = slotSeries.length;
  // Points to decode per series (and of them with stored steps), then their buffers.
  const missing = new Int32Array(slots);
  const missingSteps = new Int32Array(slots);
  for (let f = 0; f < files.length; f++) {
    const index = files[f]!.index;
    countMissing(index.rows, pairs[f]!, cached[f], missing, missingSteps);
  }
  // One buffer for every series' values and one for their stored steps, each series a view of
  // them: one allocation instead of one or two per series (with a zeroed and first-touched buffer
  // per series, allocating was a fifth of a cold year's read).
  let valueCount = 0;
  let stepCount = 0;
  for (let slot = 0; slot < slots; slot++) {
    valueCount += missing[slot]!;
    stepCount += missingSteps[slot]!;
  }
  const allValues = new Float64Array(valueCount);
  const allSteps = stepCount > 0 ? new Int32Array(stepCount) : undefined;
  const slotValues: Float64Array[] = [];
  const slotSteps: (Int32Array | undefined)[] = [];
  let valuesAt = 0;
  let stepsAt = 0;
  for (let slot = 0; slot < slots; slot++) {
    slotValues.push(allValues.subarray(valuesAt, (valuesAt += missing[slot]!)));
    slotSteps.push(
      missingSteps[slot]! > 0 ? allSteps!.subarray(stepsAt, (stepsAt += missingSteps[slot]!)) : undefined,
    );
  }
  const allocated = allValues.byteLength + (allSteps?.byteLength ?? 0);
  const caching = allocated <= cache.limitBytes;
  const spans = await readSpans(files, pairs, cached);
  const fill = FILL.reset(slots);
  const segments = SEGMENTS.reset(segmentCapacity);
  for (let f = 0; f < files.length; f++) {
    const { index, path } = files[f]!;
    try {
      useCached(index.stepSec, pairs[f]!, cached[f], segments);
      const fromDecoded = segments.length;
      const { rows, stepSec, windowStartSec } = index;
      decodeFile(
        spans[f]!,
        rows,
        stepSec,
        windowStartSec,
        pairs[f]!,
        cached[f],
        slotValues,
        slotSteps,
        fill,
        segments,
        (position, problem) => onDamaged(files[f]!, position, problem),
      );
      if (caching && segments.length > fromDecoded) cache.add(path, segments.toCache(fromDecoded));
    } catch (error) {
      throw new DamagedFile(path, error);
    }
  }
  if (caching && allocated > 0) cache.trim(new Set(files.map((file) => file.path)));
  const pieces = assemblePieces(segments, slots);
  segments.reset(0);
  for (let slot = 0; slot < slots; slot++) {
    const series = slotSeries[slot]!;
    if (pieces[slot]!.length > 0) result.set(series.key, { series, pieces: pieces[slot]! });
  }
}

/** The positions of a series table that `wants` accepts, with the query's slot of each series. */
function wantedPairs(
  series: readonly (SeriesInfo | undefined)[],
  wants: (series: SeriesInfo) => boolean,
  slotOfKey: Map<string, number>,
  slotSeries: SeriesInfo[],
): Int32Array {
  const pairs: number[] = [];
  for (let position = 0; position < series.length; position++) {
    const info = series[position];
    if (info === undefined || !wants(info)) continue;
    let slot = slotOfKey.get(info.key);
    if (slot === undefined) {
      slot = slotSeries.length;
      slotOfKey.set(info.key, slot);
      slotSeries.push(info);
    }
    pairs.push(position, slot);
  }
  return Int32Array.from(pairs);
}

function isCached(cached: readonly DecodedFile[] | undefined, position: number): boolean {
  if (cached === undefined) return false;
  for (let d = 0; d < cached.length; d++) if (cached[d]!.entryOf.has(position)) return true;
  return false;
}

function countMissing(
  rows: Uint32Array,
  pairs: Int32Array,
  cached: readonly DecodedFile[] | undefined,
  missing: Int32Array,
  missingSteps: Int32Array,
): void {
  for (let p = 0; p < pairs.length; p += 2) {
    const position = pairs[p]!;
    const row = position * FIELDS;
    if ((rows[row + FLAGS]! & FLAG_READABLE) === 0 || isCached(cached, position)) continue;
    const count = rows[row + COUNT]!;
    const slot = pairs[p + 1]!;
    missing[slot] = missing[slot]! + count;
    if (rows[row + STEPS_LENGTH]! > 0) missingSteps[slot] = missingSteps[slot]! + count;
  }
}

/** How far each series' buffers are filled, and the base of its stored steps (by slot). */
class Fill {
  values = new Int32Array(0);
  steps = new Int32Array(0);
  baseStep = new Float64Array(0);

  reset(slots: number): this {
    if (this.values.length < slots) {
      this.values = new Int32Array(2 * slots);
      this.steps = new Int32Array(2 * slots);
      this.baseStep = new Float64Array(2 * slots);
    }
    this.values.fill(0, 0, slots);
    this.steps.fill(0, 0, slots);
    this.baseStep.fill(-1, 0, slots);
    return this;
  }
}

/**
 * The state of the query being decoded, kept for the process (decoding is synchronous): no
 * allocation per query, and hidden classes that outlive a full GC (see the top of this file).
 */
const FILL = new Fill();
const SEGMENTS = new Segments();

/** A file's bytes [first, first + bytes.length) that the query decodes; empty when it decodes nothing. */
interface Span {
  first: number;
  bytes: Uint8Array;
}

const NO_SPAN: Span = { first: 0, bytes: new Uint8Array(0) };

/**
 * The span of each file's sections that the cache does not hold, read with one read per file
 * into parts of one buffer. Rejects with `DamagedFile` for a file that cannot be read at all.
 */
async function readSpans(
  files: readonly FileToRead[],
  pairs: readonly Int32Array[],
  cached: readonly (readonly DecodedFile[] | undefined)[],
): Promise<Span[]> {
  const ranges = files.map(({ index }, f) => spanOf(index.rows, pairs[f]!, cached[f]));
  let total = 0;
  for (const [first, end] of ranges) total += end - first;
  const buffer = new Uint8Array(total);
  let at = 0;
  // All files at once: the thread pool reads several in parallel.
  return Promise.all(
    files.map(async ({ path }, f) => {
      const [first, end] = ranges[f]!;
      if (end === first) return NO_SPAN;
      const into = buffer.subarray(at, (at += end - first));
      try {
        return { first, bytes: into.subarray(0, await readSpan(path, first, into)) };
      } catch (error) {
        throw new DamagedFile(path, error);
      }
    }),
  );
}

/** [first, end) of the sections to decode from a file (one read for all of them); [0, 0) for none. */
function spanOf(
  rows: Uint32Array,
  pairs: Int32Array,
  cached: readonly DecodedFile[] | undefined,
): [number, number] {
  let first = Number.POSITIVE_INFINITY;
  let end = 0;
  for (let p = 0; p < pairs.length; p += 2) {
    const row = pairs[p]! * FIELDS;
    if ((rows[row + FLAGS]! & FLAG_READABLE) === 0 || rows[row + COUNT] === 0 || isCached(cached, pairs[p]!))
      continue;
    const length = rows[row + STEPS_LENGTH]! + rows[row + VALUES_LENGTH]!;
    first = Math.min(first, rows[row + OFFSET]!);
    end = Math.max(end, rows[row + OFFSET]! + length);
  }
  return end === 0 ? [0, 0] : [first, end];
}

/** Decodes the wanted positions of a file that the cache does not hold into their series' buffers. */
function decodeFile(
  { first, bytes: span }: Span,
  rows: Uint32Array,
  stepSec: number,
  windowStartSec: number,
  pairs: Int32Array,
  cached: readonly DecodedFile[] | undefined,
  slotValues: readonly Float64Array[],
  slotSteps: readonly (Int32Array | undefined)[],
  fill: Fill,
  segments: Segments,
  onDamaged: (position: number, problem: string) => void,
): void {
  const windowStep = windowStartSec / stepSec;
  for (let p = 0; p < pairs.length; p += 2) {
    const position = pairs[p]!;
    const row = position * FIELDS;
    const count = rows[row + COUNT]!;
    if ((rows[row + FLAGS]! & FLAG_READABLE) === 0 || count === 0 || isCached(cached, position)) continue;
    const slot = pairs[p + 1]!;
    const values = slotValues[slot]!;
    const valuesAt = fill.values[slot]!;
    const firstStep = rows[row + FIRST_STEP]!;
    const at = rows[row + OFFSET]! - first;
    const stepsLength = rows[row + STEPS_LENGTH]!;
    const storedSteps = stepsLength > 0;
    const stepsAt = storedSteps ? fill.steps[slot]! : 0;
    if (storedSteps && fill.baseStep[slot]! < 0) fill.baseStep[slot] = windowStep;
    const baseStep = fill.baseStep[slot]!;
    try {
      const sectionsEnd = at + stepsLength + rows[row + VALUES_LENGTH]!;
      if (sectionsEnd > span.length) throw new Error(`file ends before byte ${first + sectionsEnd}`);
      const column = span.subarray(at + stepsLength, sectionsEnd);
      if (checksum(column) !== rows[row + VALUES_CRC])
        throw new Error(`values checksum mismatch at byte ${at + first + stepsLength}`);
      if (stepsLength > 0) {
        const stepBytes = span.subarray(at, at + stepsLength);
        if (checksum(stepBytes) !== rows[row + STEPS_CRC])
          throw new Error(`steps checksum mismatch at byte ${at + first}`);
        decodeSteps(stepBytes, firstStep, slotSteps[slot]!, stepsAt, count, windowStep - baseStep);
      }
      const prediction = (rows[row + FLAGS]! & FLAG_RATE) !== 0 ? 'rate' : 'hold';
      decodeBlockColumn(column, prediction, values, valuesAt, count);
    } catch (error) {
      // This series' sections only: the file's other series still read.
      onDamaged(position, (error as Error).message);
      continue;
    }
    if (storedSteps) fill.steps[slot] = stepsAt + count;
    fill.values[slot] = valuesAt + count;
    const s = segments.length++;
    segments.slot[s] = slot;
    segments.position[s] = position;
    segments.values[s] = values;
    segments.at[s] = valuesAt;
    segments.count[s] = count;
    segments.firstStep[s] = windowStep + firstStep;
    segments.steps[s] = storedSteps ? slotSteps[slot] : undefined;
    segments.stepsAt[s] = stepsAt;
    segments.baseStep[s] = baseStep;
    segments.stepSec[s] = stepSec;
  }
}
