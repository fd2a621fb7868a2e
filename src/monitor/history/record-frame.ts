import { crc32 } from 'node:zlib';

/**
 * Framing of the history files: each record is `u32 payload length · u32 CRC-32 of the payload ·
 * payload` (little-endian). A record whose length runs past the end of the file, or whose CRC does
 * not match, ends the readable part: appends are the only writes, so a bad record is a write that
 * was cut short (a crash, `kill -9`, a full disk) and everything from it on is dropped.
 */
export const FRAME_HEADER_BYTES = 8;

/** Largest payload accepted when reading: a corrupt length field must not make us allocate gigabytes. */
export const MAX_PAYLOAD_BYTES = 256 << 20;

export function frameRecord(payload: Uint8Array): Uint8Array {
  const framed = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  const view = new DataView(framed.buffer);
  view.setUint32(0, payload.length, true);
  view.setUint32(4, crc32(payload), true);
  framed.set(payload, FRAME_HEADER_BYTES);
  return framed;
}

export interface ScannedRecords {
  /** Payloads of the intact records, in file order (views into the input). */
  payloads: Uint8Array[];
  /** Bytes from the start that hold intact records; the rest is torn. */
  intactBytes: number;
  /** Why reading stopped before the end, `undefined` when every byte was intact. */
  problem: string | undefined;
}

/** Splits a file's bytes into record payloads, stopping at the first torn or corrupt record. */
export function scanRecords(bytes: Uint8Array): ScannedRecords {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloads: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < FRAME_HEADER_BYTES) {
      return { payloads, intactBytes: offset, problem: `incomplete record header at byte ${offset}` };
    }
    const length = view.getUint32(offset, true);
    const expected = view.getUint32(offset + 4, true);
    const start = offset + FRAME_HEADER_BYTES;
    if (length > MAX_PAYLOAD_BYTES || start + length > bytes.length) {
      return { payloads, intactBytes: offset, problem: `record at byte ${offset} runs past the end` };
    }
    const payload = bytes.subarray(start, start + length);
    if (crc32(payload) !== expected) {
      return { payloads, intactBytes: offset, problem: `checksum mismatch in record at byte ${offset}` };
    }
    payloads.push(payload);
    offset = start + length;
  }
  return { payloads, intactBytes: offset, problem: undefined };
}

/** CRC-32 of a byte range (the per-chunk checksum of sealed segments). */
export function checksum(bytes: Uint8Array): number {
  return crc32(bytes);
}
