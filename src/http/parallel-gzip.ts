import { constants, crc32, deflateRaw } from 'node:zlib';

/** Window of deflate: how far back a match can reach, bytes. */
const WINDOW_BYTES = 32 * 1024;
/** gzip member header: deflate, no flags, no time, no extra flags, unknown OS (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * The gzip encoding of `bytes`, its pieces deflated at once on libuv's thread pool (as pigz does):
 * each piece is primed with the 32 KiB before it as a preset dictionary, so it compresses about as
 * well as in one stream, and ends on a byte boundary (a sync flush) so the pieces join into one
 * deflate stream; the last one ends it. One gzip member, for any gzip reader. On a machine with a
 * core to spare, a 1.4 MB process list takes about two thirds of the time of one stream
 * (docs/performance.md#a-full-server).
 */
export async function gzipInPieces(
  bytes: Buffer,
  pieces: number,
  level = constants.Z_DEFAULT_COMPRESSION,
): Promise<Buffer> {
  const count = Math.max(1, Math.min(pieces, Math.floor(bytes.length / WINDOW_BYTES)));
  const size = Math.ceil(bytes.length / count);
  const deflated: Promise<Buffer>[] = [];
  for (let index = 0; index < count; index++) {
    const start = index * size;
    const last = index === count - 1;
    deflated.push(
      new Promise((resolve, reject) => {
        deflateRaw(
          bytes.subarray(start, last ? bytes.length : start + size),
          {
            level,
            finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH,
            ...(start > 0 ? { dictionary: bytes.subarray(Math.max(0, start - WINDOW_BYTES), start) } : {}),
          },
          (error, result) => (error === null ? resolve(result) : reject(error)),
        );
      }),
    );
  }
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(bytes) >>> 0, 0);
  trailer.writeUInt32LE(bytes.length >>> 0, 4);
  // Settled, all of them: none still reads `bytes` when this returns (the caller may reuse them).
  const settled = await Promise.allSettled(deflated);
  const parts: Buffer[] = [];
  for (const result of settled) {
    if (result.status === 'rejected') throw result.reason;
    parts.push(result.value);
  }
  return Buffer.concat([GZIP_HEADER, ...parts, trailer]);
}
