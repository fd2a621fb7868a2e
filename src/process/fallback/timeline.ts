import type { FlvTag } from './flv.js';
import { TAG_AUDIO } from './flv.js';

/** Assumed time between two frames before the output has shown two video frames. */
const DEFAULT_FRAME_MS = 40;

/**
 * The encoder's one timeline across sources: each source's timestamps start wherever that source
 * started (a feeder starts at 0, a live primary anywhere), so each segment gets an offset that puts
 * its first tag one frame after the last tag written. Within a stream, timestamps never go back.
 */
export class Timeline {
  private offset = 0;
  private lastWritten = -1;
  private readonly lastByType = new Map<number, number>();
  private frameMs = DEFAULT_FRAME_MS;
  private lastVideo = -1;

  /** Starts a segment whose first tag has `sourceTimestamp`. */
  begin(sourceTimestamp: number): void {
    const first = this.lastWritten < 0 ? 0 : this.lastWritten + this.frameMs;
    this.offset = first - sourceTimestamp;
  }

  /** The tag on the encoder's timeline. */
  place(tag: FlvTag): FlvTag {
    const last = this.lastByType.get(tag.type) ?? 0;
    const timestamp = Math.max(last, tag.timestamp + this.offset);
    this.lastByType.set(tag.type, timestamp);
    if (tag.type !== TAG_AUDIO) {
      // The frame interval of the output so far, for the gap between two segments.
      if (this.lastVideo >= 0 && timestamp > this.lastVideo && timestamp - this.lastVideo <= 200)
        this.frameMs = timestamp - this.lastVideo;
      this.lastVideo = timestamp;
    }
    this.lastWritten = Math.max(this.lastWritten, timestamp);
    return { type: tag.type, timestamp, body: tag.body };
  }
}
