import { MessageType } from './message.js';

/** What the relay needs to know about one audio/video message (an FLV tag body). */
export type TagKind = 'sequence-header' | 'keyframe' | 'frame';

const AVC = 7;
const HEVC = 12;
const AAC = 10;

/**
 * Classifies a video or audio payload (FLV specification 10.1, E.4.2/E.4.3, and the Enhanced
 * RTMP extension's extended video header). A sequence header (AVC/HEVC decoder configuration,
 * AAC AudioSpecificConfig) is cached for late joiners; a keyframe is where a player may start.
 */
export function classifyTag(typeId: number, payload: Buffer): TagKind {
  if (payload.length === 0) return 'frame';
  const first = payload[0] as number;
  if (typeId === MessageType.AUDIO) {
    return first >> 4 === AAC && payload[1] === 0 ? 'sequence-header' : 'frame';
  }
  if ((first & 0x80) !== 0) {
    // Enhanced RTMP: frame type in bits 4–6, packet type in the low nibble (0 = sequence start).
    if ((first & 0x0f) === 0) return 'sequence-header';
    return ((first >> 4) & 0x07) === 1 ? 'keyframe' : 'frame';
  }
  const codec = first & 0x0f;
  if ((codec === AVC || codec === HEVC) && payload[1] === 0) return 'sequence-header';
  return first >> 4 === 1 ? 'keyframe' : 'frame';
}
