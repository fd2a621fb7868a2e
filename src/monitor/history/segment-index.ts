import type { ByteReader } from './byte-buffer.js';
import type { SeriesInfo } from './series-kind.js';
import type { SeriesTables } from './series-table.js';

/**
 * The parsed index of a sealed window (segment-file.ts): the series by position, and per position
 * a row of `FIELDS` numbers in one `Uint32Array` (no object per series: a query of a year parses 37
 * indexes of every series of a tier, and per-series objects made most of its garbage).
 * A row holds where a series' sections lie and their checksums.
 */
/** Window-relative step of the first point. */
export const FIRST_STEP = 0;
export const COUNT = 1;
/** Byte offset in the file of the series' first section. */
export const OFFSET = 2;
/** Bytes of the steps section (0: dense, a point every step from the first). */
export const STEPS_LENGTH = 3;
/** CRC-32 of the steps section. */
export const STEPS_CRC = 4;
/** Bytes of the first value column. */
export const VALUES_LENGTH = 5;
export const VALUES_CRC = 6;
/** `FLAG_*` bits. */
export const FLAGS = 7;
/** Numbers per row. */
export const FIELDS = 8;
/** The series can be read (its metric is in the catalog and it has a value column). */
export const FLAG_READABLE = 1;
/** Its first column is predicted at a steady rate (counters), else held (gauges). */
export const FLAG_RATE = 2;

export class SegmentIndex {
  readonly stepSec: number;
  readonly windowStartSec: number;
  /** Series by position; the same array for every file with the same series table (so per-query work is done once per table). */
  readonly series: readonly (SeriesInfo | undefined)[];
  /** `FIELDS` numbers per position. */
  readonly rows: Uint32Array;

  constructor(
    stepSec: number,
    windowStartSec: number,
    series: readonly (SeriesInfo | undefined)[],
    rows: Uint32Array,
  ) {
    this.stepSec = stepSec;
    this.windowStartSec = windowStartSec;
    this.series = series;
    this.rows = rows;
  }

  field(position: number, field: number): number {
    return this.rows[position * FIELDS + field]!;
  }

  readable(position: number): boolean {
    return (this.rows[position * FIELDS + FLAGS]! & FLAG_READABLE) !== 0;
  }

  /** Leaves a damaged series out of every later read of this index (and out of `seriesIn`). */
  markUnreadable(position: number): void {
    this.rows[position * FIELDS + FLAGS] = this.rows[position * FIELDS + FLAGS]! & ~FLAG_READABLE;
  }

  /** Bytes held (for the index cache's accounting). */
  get byteLength(): number {
    return this.rows.byteLength + 8 * this.series.length + 64;
  }
}

/** The series rows of an index, read after its version byte, step and window start. */
export function decodeIndex(
  reader: ByteReader,
  dataStart: number,
  tables: SeriesTables,
): { series: readonly (SeriesInfo | undefined)[]; rows: Uint32Array } {
  const series = tables.decode(reader.bytesField());
  const rows = new Uint32Array(series.length * FIELDS);
  let offset = dataStart;
  for (let position = 0, row = 0; position < series.length; position++, row += FIELDS) {
    rows[row + FIRST_STEP] = reader.varint();
    rows[row + COUNT] = reader.varint();
    const layout = reader.u8();
    const stepsLength = reader.varint();
    rows[row + OFFSET] = offset;
    rows[row + STEPS_LENGTH] = stepsLength;
    if (stepsLength > 0) rows[row + STEPS_CRC] = reader.u32();
    offset += stepsLength;
    const columns = layout & 0xf;
    for (let c = 0; c < columns; c++) {
      const length = reader.varint();
      const crc = length > 0 ? reader.u32() : 0;
      if (c === 0) {
        rows[row + VALUES_LENGTH] = length;
        rows[row + VALUES_CRC] = crc;
      }
      offset += length;
    }
    if (offset > 0xffffffff) throw new RangeError('index: sections past 4 GiB');
    // A metric no longer in the catalog is skipped; its sections are never read.
    const readable = series[position] !== undefined && columns > 0;
    rows[row + FLAGS] = (readable ? FLAG_READABLE : 0) | ((layout & 0x10) !== 0 ? FLAG_RATE : 0);
  }
  if (!reader.done) throw new RangeError('index: bytes after the last series');
  return { series, rows };
}
