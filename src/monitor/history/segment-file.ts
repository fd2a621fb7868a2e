import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ByteReader, ByteWriter } from './byte-buffer.js';
import type { ColumnPrediction } from './column-codec.js';
import { checksum, FRAME_HEADER_BYTES, frameRecord, MAX_PAYLOAD_BYTES } from './record-frame.js';
import { decodeSeriesValues, type DecodedValues, type SeriesChunkEncoder } from './series-chunk.js';
import { decodeChunkV1, decodeIndexV1, type SegmentEntryV1 } from './segment-file-v1.js';
import type { SeriesInfo } from './series-kind.js';
import { encodeSeriesTable, type SeriesTables } from './series-table.js';

/**
 * A sealed window of a tier (`<window start>.seg`), written once when the window closes
 * (format 2, docs/history.md, File formats): an index record, then one record with every series'
 * sections back to back. The index has the series table (series-table.ts: names and labels, each
 * string once) and per series its first step, point count, column layout, and per section
 * (steps, then each column) its length and CRC-32. A query reads the index
 * (cached by the caller) and then, in one read, the steps and first column of the series it
 * needs, each section checked against its own CRC. Format-1 files still load (segment-file-v1.ts).
 */
const FORMAT_VERSION = 2;
const FORMAT_V1 = 1;

export interface SealedChunk {
  series: SeriesInfo;
  chunk: SeriesChunkEncoder;
}

/** A series of a format-2 file: what a read needs to find, check and decode its API values. */
export interface SegmentEntryV2 {
  format: 2;
  series: SeriesInfo;
  firstStep: number;
  count: number;
  /** Prediction of the first column. */
  prediction: ColumnPrediction;
  /** Byte offset of the steps section in the file; its length is 0 for a dense series. */
  offset: number;
  stepsLength: number;
  stepsCrc: number;
  valuesLength: number;
  valuesCrc: number;
}

export type SegmentEntry = SegmentEntryV1 | SegmentEntryV2;

export interface SegmentIndex {
  stepSec: number;
  windowStartSec: number;
  /** By series key. */
  entries: Map<string, SegmentEntry>;
}

/** Writes a sealed window atomically (temporary file, fsync, rename); returns its size in bytes. */
export function writeSegment(
  path: string,
  stepSec: number,
  windowStartSec: number,
  chunks: readonly SealedChunk[],
): number {
  const data = new ByteWriter(1024);
  const index = new ByteWriter(1024);
  index.u8(FORMAT_VERSION);
  index.varint(stepSec);
  index.varint(windowStartSec);
  index.bytesField(encodeSeriesTable(chunks.map(({ series }) => series)));
  for (const { chunk } of chunks) {
    index.varint(chunk.firstStep);
    index.varint(chunk.pointCount);
    let rateMask = 0;
    chunk.predictions.forEach((prediction, c) => (rateMask |= prediction === 'rate' ? 1 << c : 0));
    index.u8(chunk.predictions.length | (rateMask << 4));
    for (const section of chunk.sections()) {
      index.varint(section.length);
      if (section.length > 0) index.u32(checksum(section));
      data.raw(section);
    }
  }
  const head = frameRecord(index.finish());
  const body = frameRecord(data.finish());
  const temporary = join(dirname(path), `.${basename(path)}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeAll(fd, head);
    writeAll(fd, body);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
  return head.length + body.length;
}

/** Reads and checks a sealed window's index; throws with the reason when the file is damaged. */
export function readSegmentIndex(path: string, tables: SeriesTables): SegmentIndex {
  const fd = openSync(path, 'r');
  try {
    const header = readExactly(fd, 0, FRAME_HEADER_BYTES);
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    const length = view.getUint32(0, true);
    if (length > MAX_PAYLOAD_BYTES) throw new Error('index record too large');
    const payload = readExactly(fd, FRAME_HEADER_BYTES, length);
    if (checksum(payload) !== view.getUint32(4, true)) throw new Error('index checksum mismatch');
    const reader = new ByteReader(payload);
    const version = reader.u8();
    const stepSec = reader.varint();
    const windowStartSec = reader.varint();
    const dataStart = 2 * FRAME_HEADER_BYTES + length;
    if (version === FORMAT_VERSION)
      return { stepSec, windowStartSec, entries: decodeIndex(reader, dataStart, tables) };
    if (version === FORMAT_V1) return { stepSec, windowStartSec, entries: decodeIndexV1(reader, dataStart) };
    throw new Error(`unknown format version ${version}`);
  } finally {
    closeSync(fd);
  }
}

function decodeIndex(reader: ByteReader, dataStart: number, tables: SeriesTables): Map<string, SegmentEntry> {
  const entries = new Map<string, SegmentEntry>();
  let offset = dataStart;
  for (const series of tables.decode(reader.bytesField())) {
    const firstStep = reader.varint();
    const count = reader.varint();
    const layout = reader.u8();
    const stepsLength = reader.varint();
    const stepsCrc = stepsLength > 0 ? reader.u32() : 0;
    const entryOffset = offset;
    offset += stepsLength;
    let valuesLength = 0;
    let valuesCrc = 0;
    for (let c = 0; c < (layout & 0xf); c++) {
      const length = reader.varint();
      const crc = length > 0 ? reader.u32() : 0;
      if (c === 0) {
        valuesLength = length;
        valuesCrc = crc;
      }
      offset += length;
    }
    // A metric no longer in the catalog is skipped; its sections are never read.
    if (series === undefined || (layout & 0xf) === 0) continue;
    entries.set(series.key, {
      format: 2,
      series,
      firstStep,
      count,
      prediction: (layout & 0x10) !== 0 ? 'rate' : 'hold',
      offset: entryOffset,
      stepsLength,
      stepsCrc,
      valuesLength,
      valuesCrc,
    });
  }
  if (!reader.done) throw new RangeError('index: bytes after the last series');
  return entries;
}

/** The bytes of `entry` a read needs: [from, to) in the file. */
function spanOf(entry: SegmentEntry): { from: number; to: number } {
  if (entry.format === 1) return { from: entry.offset, to: entry.offset + entry.length };
  return { from: entry.offset, to: entry.offset + entry.stepsLength + entry.valuesLength };
}

/**
 * Reads and decodes the API values of `entries` from one file: one open and one read of the span
 * that holds them all (a file's series lie back to back, so a query of many series of a file is
 * one read instead of one per series), each section checked against its CRC.
 */
export function readChunks(path: string, entries: readonly SegmentEntry[]): DecodedValues[] {
  if (entries.length === 0) return [];
  let first = Number.POSITIVE_INFINITY;
  let end = 0;
  for (const entry of entries) {
    const { from, to } = spanOf(entry);
    first = Math.min(first, from);
    end = Math.max(end, to);
  }
  const fd = openSync(path, 'r');
  let span: Uint8Array;
  try {
    span = readExactly(fd, first, end - first);
  } finally {
    closeSync(fd);
  }
  // One buffer for all values: a typed array of its own per series (an allocation outside the
  // heap each) cost more than decoding a steady series.
  let total = 0;
  for (const entry of entries) total += entry.count;
  const values = new Float64Array(total);
  let into = 0;
  return entries.map((entry) => {
    const at = entry.offset - first;
    const out = values.subarray(into, (into += entry.count));
    if (entry.format === 1) {
      const bytes = span.subarray(at, at + entry.length);
      if (checksum(bytes) !== entry.crc) throw new Error(`chunk checksum mismatch at byte ${entry.offset}`);
      return decodeChunkV1(entry, bytes);
    }
    const steps = span.subarray(at, at + entry.stepsLength);
    const column = span.subarray(at + entry.stepsLength, at + entry.stepsLength + entry.valuesLength);
    if (steps.length > 0 && checksum(steps) !== entry.stepsCrc)
      throw new Error(`steps checksum mismatch at byte ${entry.offset}`);
    if (checksum(column) !== entry.valuesCrc)
      throw new Error(`values checksum mismatch at byte ${entry.offset + entry.stepsLength}`);
    return decodeSeriesValues(steps, column, entry.prediction, entry.firstStep, out);
  });
}

function readExactly(fd: number, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) throw new Error(`file ends at byte ${position + read}, expected ${position + length}`);
    read += n;
  }
  return bytes;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}
