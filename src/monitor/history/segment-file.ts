import { closeSync, openSync, readSync } from 'node:fs';
import { writeFileAtomicSync } from './atomic-file.js';
import { encodeBlockColumn } from './block-column.js';
import { ByteReader, ByteWriter } from './byte-buffer.js';
import { decodeColumn } from './column-codec.js';
import { checksum, FRAME_HEADER_BYTES, frameRecord, MAX_PAYLOAD_BYTES } from './record-frame.js';
import type { SeriesChunkEncoder } from './series-chunk.js';
import { decodeIndex, SegmentIndex } from './segment-index.js';
import type { SeriesInfo } from './series-kind.js';
import { encodeSeriesTable, type SeriesTables } from './series-table.js';

/**
 * A sealed window of a tier (`<window start>.seg`), written once when the window closes
 * (format 3, docs/history.md#file-formats-dirminute-dirhour): an index record, then one record with every series'
 * sections back to back. The index has the series table (series-table.ts: names and labels, each
 * string once) and per series its first step, point count, column layout, and per section
 * (steps, then each column) its length and CRC-32. A query reads the index
 * (cached by the caller) and then, in one read, the steps and first column of the series it
 * needs, each section checked against its own CRC. The first column, the one queries read, is a
 * block column (block-column.ts); the steps and the other columns are the adaptive Rice columns
 * the open window kept (column-codec.ts). Only format 3 is read: a file of another version is
 * skipped as damaged (formats 1 and 2 were never released).
 */
const FORMAT_VERSION = 3;

export interface SealedChunk {
  series: SeriesInfo;
  chunk: SeriesChunkEncoder;
}

/** The first column's values while it is re-encoded (writing is synchronous). */
let firstColumn = new Float64Array(1024);

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
    const sections = chunk.sections();
    // The first column re-encoded whole, for fast reads.
    if (firstColumn.length < chunk.pointCount) firstColumn = new Float64Array(2 * chunk.pointCount);
    const first = firstColumn.subarray(0, chunk.pointCount);
    decodeColumn(sections[1]!, chunk.predictions[0]!, first);
    sections[1] = encodeBlockColumn(first, chunk.predictions[0]!);
    for (const section of sections) {
      index.varint(section.length);
      if (section.length > 0) index.u32(checksum(section));
      data.raw(section);
    }
  }
  const head = frameRecord(index.finish());
  const body = frameRecord(data.finish());
  writeFileAtomicSync(path, [head, body]);
  return head.length + body.length;
}

/**
 * The reader of every index, kept for the process: an object that lives for one read has a hidden
 * class the engine may drop at a full GC when no such object is alive, and the optimised code of
 * everything that used it is then thrown away (the next query ran unoptimised).
 */
const indexReader = new ByteReader(new Uint8Array(0));

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
    const reader = indexReader.reset(payload);
    const version = reader.u8();
    const stepSec = reader.varint();
    const windowStartSec = reader.varint();
    const dataStart = 2 * FRAME_HEADER_BYTES + length;
    if (version === FORMAT_VERSION) {
      const { series, rows } = decodeIndex(reader, dataStart, tables);
      return new SegmentIndex(stepSec, windowStartSec, series, rows);
    }
    throw new Error(`unknown format version ${version}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Bytes [from, from + length) of the file at `path`, in one read into a buffer shared by all
 * reads (a query reads one span per file and is done with it before the next: no allocation per
 * file). Shorter when the file ends before: the sections past its end are damaged, the others
 * still read. Valid until the next call.
 */
export function readSpan(path: string, from: number, length: number): Uint8Array {
  if (length > spanBuffer.length) spanBuffer = new Uint8Array(Math.max(length, 2 * spanBuffer.length));
  const fd = openSync(path, 'r');
  try {
    let read = 0;
    while (read < length) {
      const n = readSync(fd, spanBuffer, read, length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    return spanBuffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

let spanBuffer = new Uint8Array(64 * 1024);

function readExactly(fd: number, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) throw new Error(`file ends at byte ${position + read}, expected ${position + length}`);
    read += n;
  }
  return bytes.subarray(0, length);
}
