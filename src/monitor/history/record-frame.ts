import { crc32 } from 'node:zlib';

/**
 * Framing of the two records of a sealed segment file (segment-file.ts): `u32 payload length ·
 * u32 CRC-32 of the payload · payload` (little-endian). A segment is written once, whole (temporary
 * file, fsync, rename) and read at known offsets, never scanned; the write-ahead log, which is
 * appended to and scanned, has its own framing with a sync marker (log-frame.ts).
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

/** CRC-32 of a byte range (the per-chunk checksum of sealed segments). */
export function checksum(bytes: Uint8Array): number {
  return crc32(bytes);
}
