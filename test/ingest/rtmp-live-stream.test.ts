import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LiveStream, type PlayerSink } from '../../src/ingest/rtmp/live-stream.js';
import { MessageType } from '../../src/ingest/rtmp/message.js';

/** A player whose unsent bytes only grow: it never reads, like a paused socket. */
class StalledSink implements PlayerSink {
  queuedBytes = 0;
  closedFor: string | undefined;
  write(bytes: Buffer): void {
    this.queuedBytes += bytes.length;
  }
  close(reason: string): void {
    this.closedFor = reason;
  }
}

const KEYFRAME = Buffer.concat([Buffer.from([0x17, 1, 0, 0, 0]), Buffer.alloc(1000)]);
const LIMITS = { maxPlayerQueueBytes: 4096, maxBehindMs: 1500, maxGopBytes: 1 << 20, chunkSize: 4096 };

/**
 * A stream with one stalled player, after five keyframes: each was written while the queue was
 * still under the bound, the fifth crossed it, and then the publisher pauses, so no further tag
 * ever sees the player over its bound. `clock.nowMs` is the stream's clock.
 */
function pausedAfterCrossing(): { stream: LiveStream; sink: StalledSink; clock: { nowMs: number } } {
  const clock = { nowMs: 0 };
  const stream = new LiveStream('/live/x', LIMITS, () => clock.nowMs);
  const sink = new StalledSink();
  stream.addPlayer(sink);
  for (let tag = 0; tag < 5; tag++) stream.pushMedia(MessageType.VIDEO, tag * 40, KEYFRAME);
  return { stream, sink, clock };
}

describe('RTMP relay of one live stream', () => {
  it('drops a player whose queue crossed the bound with the last tag, once it stayed over for maxBehindMs', () => {
    const { stream, sink, clock } = pausedAfterCrossing();
    assert.ok(sink.queuedBytes > LIMITS.maxPlayerQueueBytes);
    assert.equal(stream.skippedTags, 0);
    stream.sweep();
    clock.nowMs += 1000;
    stream.sweep();
    assert.equal(sink.closedFor, undefined, 'still within maxBehindMs');
    clock.nowMs += 1000;
    stream.sweep();
    assert.equal(sink.closedFor, 'player fell behind');
    assert.equal(stream.playerCount, 0);
  });

  it('keeps a player that drained below the bound between sweeps', () => {
    const { stream, sink, clock } = pausedAfterCrossing();
    stream.sweep();
    clock.nowMs += 1000;
    sink.queuedBytes = 0; // the socket sent everything
    stream.sweep();
    sink.queuedBytes = LIMITS.maxPlayerQueueBytes + 1;
    clock.nowMs += 1000;
    stream.sweep();
    assert.equal(sink.closedFor, undefined, 'the clock started over when it drained');
    clock.nowMs += 1600;
    stream.sweep();
    assert.equal(sink.closedFor, 'player fell behind');
  });
});
