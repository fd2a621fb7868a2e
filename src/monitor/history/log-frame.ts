import { crc32 } from 'node:zlib';

/**
 * Framing of the write-ahead log's records (`<window start>.wal`): `sync marker (4 bytes) · u32
 * payload length · u32 CRC-32 of the length field and the payload · payload`, little-endian.
 *
 * A log is appended to while the server runs, so damage can sit anywhere in it: a write cut short
 * by a crash, a file truncated or overwritten from outside, flipped bits. A reader that stopped at
 * the first bad record would lose every record after it; the marker lets it find the next record
 * instead (the first marker after the damage whose record passes its checksum), so only the
 * damaged bytes are lost. The checksum covers the length too: a corrupt length cannot make an
 * intact payload look like a different record. The marker also names the format: a log of another
 * format has no record this reader accepts.
 */
const LOG_SYNC_MARKER: Uint8Array = Uint8Array.of(0xd3, 0x1c, 0xa7, 0x5e);

const LOG_FRAME_HEADER_BYTES = 12;

/** Largest payload accepted: a corrupt length field must not make the reader hash gigabytes. */
const MAX_LOG_PAYLOAD_BYTES = 64 << 20;

/** The record of `payload` as it goes into the log. */
export function frameLogRecord(payload: Uint8Array): Uint8Array {
  const framed = new Uint8Array(LOG_FRAME_HEADER_BYTES + payload.length);
  const view = new DataView(framed.buffer);
  framed.set(LOG_SYNC_MARKER, 0);
  view.setUint32(4, payload.length, true);
  framed.set(payload, LOG_FRAME_HEADER_BYTES);
  view.setUint32(8, crcOf(framed, 4, payload.length), true);
  return framed;
}

/** An intact record of a log: its payload and where its framed bytes lie, `[start, end)`. */
export interface LogRecord {
  payload: Uint8Array;
  start: number;
  end: number;
}

/** Bytes `[from, to)` of a log that hold no intact record. */
export interface DamagedSpan {
  from: number;
  to: number;
}

export interface ScannedLog {
  /** The intact records, in file order (payloads are views into the input). */
  records: LogRecord[];
  /** The damaged spans, in file order; empty when every byte belongs to an intact record. */
  damaged: DamagedSpan[];
}

/**
 * Splits a log's bytes into its intact records. Bytes that are not an intact record (from a bad
 * record up to the next marker that starts an intact one, or to the end) are reported as one
 * damaged span each; the records after them are kept.
 */
export function scanLog(bytes: Uint8Array): ScannedLog {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: LogRecord[] = [];
  const damaged: DamagedSpan[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const record = recordAt(buffer, offset);
    if (record !== undefined) {
      records.push(record);
      offset = record.end;
      continue;
    }
    let next = buffer.indexOf(LOG_SYNC_MARKER, offset + 1);
    while (next >= 0 && recordAt(buffer, next) === undefined)
      next = buffer.indexOf(LOG_SYNC_MARKER, next + 1);
    const to = next < 0 ? buffer.length : next;
    damaged.push({ from: offset, to });
    offset = to;
  }
  return { records, damaged };
}

/** The intact record starting at `offset`, if there is one. */
function recordAt(buffer: Buffer, offset: number): LogRecord | undefined {
  if (buffer.length - offset < LOG_FRAME_HEADER_BYTES) return undefined;
  for (let i = 0; i < LOG_SYNC_MARKER.length; i++)
    if (buffer[offset + i] !== LOG_SYNC_MARKER[i]) return undefined;
  const length = buffer.readUInt32LE(offset + 4);
  const start = offset + LOG_FRAME_HEADER_BYTES;
  if (length > MAX_LOG_PAYLOAD_BYTES || start + length > buffer.length) return undefined;
  if (crcOf(buffer, offset + 4, length) !== buffer.readUInt32LE(offset + 8)) return undefined;
  return { payload: buffer.subarray(start, start + length), start: offset, end: start + length };
}

/** CRC-32 of the length field at `lengthAt` and the `length` payload bytes after the checksum. */
function crcOf(bytes: Uint8Array, lengthAt: number, length: number): number {
  const payloadAt = lengthAt + 8;
  return crc32(bytes.subarray(payloadAt, payloadAt + length), crc32(bytes.subarray(lengthAt, lengthAt + 4)));
}
