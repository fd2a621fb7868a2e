import { closeSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { writeFileAtomic, writeFileAtomicSync } from './atomic-file.js';
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

/**
 * The longest the encoding of a segment holds the event loop at a time, ms: a window of 10 000
 * series takes a few hundred ms of CPU, which would otherwise delay requests and the next tick.
 */
const ENCODING_SLICE_MS = 5;

/**
 * Writes a sealed window atomically (temporary file, fsync, rename) through the thread pool;
 * returns its size in bytes. The encoding runs first, in slices of `ENCODING_SLICE_MS` with the
 * event loop's other work between them (the caller changes no chunk meanwhile).
 */
export async function writeSegment(
  path: string,
  stepSec: number,
  windowStartSec: number,
  chunks: readonly SealedChunk[],
): Promise<number> {
  const encoding = encodeSegment(stepSec, windowStartSec, chunks);
  let sliceStart = performance.now();
  let step = encoding.next();
  while (step.done !== true) {
    if (performance.now() - sliceStart > ENCODING_SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    step = encoding.next();
  }
  const parts = step.value;
  await writeFileAtomic(path, parts);
  return parts[0].length + parts[1].length;
}

/** `writeSegment` for start-up only (sealing windows left by an earlier run while a tier loads). */
export function writeSegmentSync(
  path: string,
  stepSec: number,
  windowStartSec: number,
  chunks: readonly SealedChunk[],
): number {
  const encoding = encodeSegment(stepSec, windowStartSec, chunks);
  let step = encoding.next();
  while (step.done !== true) step = encoding.next();
  const parts = step.value;
  writeFileAtomicSync(path, parts);
  return parts[0].length + parts[1].length;
}

/** A sealed window's file: its index record and its data record; pauses (yields) after each series. */
function* encodeSegment(
  stepSec: number,
  windowStartSec: number,
  chunks: readonly SealedChunk[],
): Generator<void, [Uint8Array, Uint8Array]> {
  // The first column's values while it is re-encoded; one per segment (encodings may interleave).
  let firstColumn = new Float64Array(1024);
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
    yield;
  }
  return [frameRecord(index.finish()), frameRecord(data.finish())];
}

/**
 * The reader of every index, kept for the process: an object that lives for one read has a hidden
 * class the engine may drop at a full GC when no such object is alive, and the optimised code of
 * everything that used it is then thrown away (the next query ran unoptimised).
 */
const indexReader = new ByteReader(new Uint8Array(0));

/**
 * Reads and checks a sealed window's index; throws with the reason when the file is damaged.
 * Synchronous, for start-up only (loading a tier); `readSegmentIndexAsync` once the server runs.
 */
export function readSegmentIndex(path: string, tables: SeriesTables): SegmentIndex {
  const fd = openSync(path, 'r');
  try {
    const header = readExactlySync(fd, 0, FRAME_HEADER_BYTES);
    return parseIndex(header, (length) => readExactlySync(fd, FRAME_HEADER_BYTES, length), tables);
  } finally {
    closeSync(fd);
  }
}

/** `readSegmentIndex` through the thread pool. */
export async function readSegmentIndexAsync(path: string, tables: SeriesTables): Promise<SegmentIndex> {
  const handle = await open(path, 'r');
  try {
    const header = await readExactly(handle, 0, FRAME_HEADER_BYTES);
    const length = indexLengthOf(header);
    const payload = await readExactly(handle, FRAME_HEADER_BYTES, length);
    return parseIndex(header, () => payload, tables);
  } finally {
    await handle.close();
  }
}

/** The index record's payload length from its frame header; throws when it cannot be one. */
function indexLengthOf(header: Uint8Array): number {
  const length = new DataView(header.buffer, header.byteOffset, header.byteLength).getUint32(0, true);
  if (length > MAX_PAYLOAD_BYTES) throw new Error('index record too large');
  return length;
}

/** Checks and decodes the index record whose frame header is `header`; `payloadOf(length)` gives its payload. */
function parseIndex(
  header: Uint8Array,
  payloadOf: (length: number) => Uint8Array,
  tables: SeriesTables,
): SegmentIndex {
  const length = indexLengthOf(header);
  const payload = payloadOf(length);
  const expected = new DataView(header.buffer, header.byteOffset, header.byteLength).getUint32(4, true);
  if (checksum(payload) !== expected) throw new Error('index checksum mismatch');
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
}

/**
 * Reads bytes [from, from + into.length) of the file at `path` into `into`, through the thread
 * pool; returns how many it read: fewer when the file ends before (the sections past its end are
 * damaged, the others still read).
 */
export async function readSpan(path: string, from: number, into: Uint8Array): Promise<number> {
  const handle = await open(path, 'r');
  try {
    let read = 0;
    while (read < into.length) {
      const { bytesRead } = await handle.read(into, read, into.length - read, from + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return read;
  } finally {
    await handle.close();
  }
}

async function readExactly(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await handle.read(bytes, read, length - read, position + read);
    if (bytesRead === 0) throw endsEarly(position, read, length);
    read += bytesRead;
  }
  return bytes;
}

function readExactlySync(fd: number, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) throw endsEarly(position, read, length);
    read += n;
  }
  return bytes;
}

function endsEarly(position: number, read: number, length: number): Error {
  return new Error(`file ends at byte ${position + read}, expected ${position + length}`);
}
