import type { RtmpMessage } from './message.js';

/** Chunk stream ids we send on (any id works for a reader; these follow ffmpeg's choice). */
export const ChunkStreamId = { CONTROL: 2, COMMAND: 3, AUDIO: 4, DATA: 5, VIDEO: 6 } as const;

/**
 * Splits one message into chunks of `chunkSize` payload bytes (RTMP specification 1.0, §5.3.1).
 * The first chunk always carries a full type-0 header, so the bytes stand alone: the relay encodes
 * a tag once and writes the same buffer to every player, whichever message a player saw before.
 * Continuation chunks are type 3 and repeat an extended timestamp, as ffmpeg and librtmp expect.
 */
export function encodeChunks(message: RtmpMessage, csid: number, chunkSize: number): Buffer {
  const { payload } = message;
  const timestamp = message.timestamp >>> 0;
  const extended = timestamp >= 0xffffff;
  const basicBytes = csid < 64 ? 1 : csid < 320 ? 2 : 3;
  const extendedBytes = extended ? 4 : 0;
  const chunks = Math.max(1, Math.ceil(payload.length / chunkSize));
  const total =
    payload.length + basicBytes + 11 + extendedBytes + (chunks - 1) * (basicBytes + extendedBytes);
  const out = Buffer.allocUnsafe(total);
  let position = writeBasicHeader(out, 0, 0, csid);
  out.writeUIntBE(extended ? 0xffffff : timestamp, position, 3);
  out.writeUIntBE(payload.length, position + 3, 3);
  out[position + 6] = message.typeId;
  out.writeUInt32LE(message.streamId, position + 7);
  position += 11;
  if (extended) position = out.writeUInt32BE(timestamp, position);
  for (let offset = 0; offset < payload.length || offset === 0; offset += chunkSize) {
    if (offset > 0) {
      position = writeBasicHeader(out, position, 3, csid);
      if (extended) position = out.writeUInt32BE(timestamp, position);
    }
    position += payload.copy(out, position, offset, Math.min(offset + chunkSize, payload.length));
    if (payload.length === 0) break;
  }
  return out;
}

function writeBasicHeader(out: Buffer, position: number, format: number, csid: number): number {
  if (csid < 64) {
    out[position] = (format << 6) | csid;
    return position + 1;
  }
  if (csid < 320) {
    out[position] = format << 6;
    out[position + 1] = csid - 64;
    return position + 2;
  }
  out[position] = (format << 6) | 1;
  out.writeUInt16LE(csid - 64, position + 1);
  return position + 3;
}
