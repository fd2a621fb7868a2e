/**
 * FLV (Adobe's FLV file format specification 10.1, annex E) as the fallback relay reads it from
 * its feeders and writes it to the encoder: the file header, then tags of 11 header bytes, a body
 * and a 4-byte back pointer. Only what the relay needs: tags in, tags out, timestamps rewritten.
 */

export const TAG_AUDIO = 8;
export const TAG_VIDEO = 9;
export const TAG_SCRIPT = 18;

/** One FLV tag: its type (8 audio, 9 video, 18 script data), timestamp in ms, and body. */
export interface FlvTag {
  type: number;
  timestamp: number;
  body: Buffer;
}

/** The file header the relay sends once, announcing audio and video (flags 0x05). */
export const FLV_HEADER = Buffer.from([0x46, 0x4c, 0x56, 0x01, 0x05, 0, 0, 0, 9, 0, 0, 0, 0]);

const HEADER_BYTES = 13;
const TAG_HEADER_BYTES = 11;
/** Larger than any frame an encoder sends; a bigger size means the stream is not FLV. */
const MAX_TAG_BYTES = 16 * 1024 * 1024;

/**
 * Splits a byte stream into FLV tags. `push` throws when the stream is not FLV (a feeder that
 * wrote something else is treated as lost by the caller).
 */
export class FlvTagReader {
  private pending: Buffer = Buffer.alloc(0);
  private headerSeen = false;

  constructor(private readonly onTag: (tag: FlvTag) => void) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    if (!this.headerSeen) {
      if (this.pending.length < HEADER_BYTES) return;
      if (this.pending.toString('latin1', 0, 3) !== 'FLV') throw new Error('not an FLV stream');
      // The header's own length (bytes 5–8), then the first back pointer.
      offset = this.pending.readUInt32BE(5) + 4;
      this.headerSeen = true;
    }
    while (this.pending.length - offset >= TAG_HEADER_BYTES) {
      const size = this.pending.readUIntBE(offset + 1, 3);
      if (size > MAX_TAG_BYTES) throw new Error(`FLV tag of ${size} bytes`);
      const end = offset + TAG_HEADER_BYTES + size + 4;
      if (this.pending.length < end) break;
      const timestamp =
        (this.pending.readUIntBE(offset + 4, 3) | ((this.pending[offset + 7] as number) << 24)) >>> 0;
      this.onTag({
        type: (this.pending[offset] as number) & 0x1f,
        timestamp,
        body: this.pending.subarray(offset + TAG_HEADER_BYTES, offset + TAG_HEADER_BYTES + size),
      });
      offset = end;
    }
    // Tags handed out share the buffer; the rest is copied so that they are not overwritten.
    this.pending = offset === 0 ? this.pending : Buffer.from(this.pending.subarray(offset));
  }
}

/** One tag as bytes, with its back pointer. */
export function encodeFlvTag(tag: FlvTag): Buffer {
  const size = tag.body.length;
  const bytes = Buffer.allocUnsafe(TAG_HEADER_BYTES + size + 4);
  bytes[0] = tag.type;
  bytes.writeUIntBE(size, 1, 3);
  bytes.writeUIntBE(tag.timestamp & 0xffffff, 4, 3);
  bytes[7] = (tag.timestamp >>> 24) & 0xff;
  bytes.writeUIntBE(0, 8, 3);
  tag.body.copy(bytes, TAG_HEADER_BYTES);
  bytes.writeUInt32BE(TAG_HEADER_BYTES + size, TAG_HEADER_BYTES + size);
  return bytes;
}

/** What a tag is to the relay: where a source may be joined, and what carries codec parameters. */
export type TagRole = 'sequence-header' | 'keyframe' | 'frame' | 'metadata';

/** The role of a tag (FLV E.4.2/E.4.3: AVC/HEVC packet type 0, AAC packet type 0; frame type 1). */
export function tagRole(tag: FlvTag): TagRole {
  if (tag.type === TAG_SCRIPT) return 'metadata';
  const first = tag.body[0];
  if (first === undefined) return 'frame';
  if (tag.type === TAG_AUDIO) return first >> 4 === 10 && tag.body[1] === 0 ? 'sequence-header' : 'frame';
  const codec = first & 0x0f;
  if ((codec === 7 || codec === 12) && tag.body[1] === 0) return 'sequence-header';
  return first >> 4 === 1 ? 'keyframe' : 'frame';
}
