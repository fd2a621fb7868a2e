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
  it('drops a player stuck between half and the whole bound, skipping every tag', () => {
    const { stream, sink, clock } = pausedAfterCrossing();
    // The first tag after the crossing is skipped; then the socket drains a little and stops, so
    // the queue sits under the bound but above half of it: the player can neither resume nor
    // cross the bound again, and would skip every tag for ever.
    stream.pushMedia(MessageType.VIDEO, 200, KEYFRAME);
    sink.queuedBytes = LIMITS.maxPlayerQueueBytes * 0.75;
    for (let tag = 0; tag < 4; tag++) {
      clock.nowMs += 600;
      stream.pushMedia(MessageType.VIDEO, 240 + tag * 40, KEYFRAME);
      stream.sweep();
    }
    assert.ok(stream.skippedTags >= 4, 'the tags after the crossing were skipped');
    assert.equal(sink.closedFor, 'player fell behind');
  });

  it('keeps a player that joins and waits for a keyframe with an empty queue', () => {
    const clock = { nowMs: 0 };
    const stream = new LiveStream('/live/y', LIMITS, () => clock.nowMs);
    stream.pushMedia(MessageType.VIDEO, 0, KEYFRAME);
    const sink = new StalledSink();
    stream.addPlayer(sink);
    sink.queuedBytes = 0; // what the join wrote has been sent
    const interFrame = Buffer.concat([Buffer.from([0x27, 1, 0, 0, 0]), Buffer.alloc(100)]);
    for (let tag = 1; tag <= 10; tag++) {
      clock.nowMs += 1000;
      stream.pushMedia(MessageType.VIDEO, tag * 40, interFrame);
      sink.queuedBytes = 0;
      stream.sweep();
    }
    assert.equal(sink.closedFor, undefined);
  });

  it('hands a listener (a process reading in the server) the headers so far, then every message as it came, then the end', () => {
    const stream = new LiveStream('/live/x', LIMITS, () => 0);
    const metadata = Buffer.from([2, 0, 10, ...Buffer.from('onMetaData'), 3, 0, 0, 9]);
    const videoHeader = Buffer.from([0x17, 0, 0, 0, 0, 1, 2]);
    const audioHeader = Buffer.from([0xaf, 0, 0x12, 0x10]);
    stream.setMetadata(metadata);
    stream.pushMedia(MessageType.VIDEO, 0, videoHeader);
    stream.pushMedia(MessageType.AUDIO, 0, audioHeader);
    stream.pushMedia(MessageType.VIDEO, 40, KEYFRAME);
    const seen: [number, number, Buffer][] = [];
    const ends: string[] = [];
    const remove = stream.addListener({
      tag: (type, timestamp, payload) => seen.push([type, timestamp, payload]),
      end: (reason) => ends.push(reason),
    });
    assert.deepEqual(seen, [
      [MessageType.DATA_AMF0, 0, metadata],
      [MessageType.VIDEO, 0, videoHeader],
      [MessageType.AUDIO, 0, audioHeader],
    ]);
    stream.pushMedia(MessageType.VIDEO, 80, KEYFRAME);
    assert.deepEqual(seen.at(-1), [MessageType.VIDEO, 80, KEYFRAME]);
    stream.end('publisher left');
    assert.deepEqual(ends, ['publisher left']);
    remove();
    stream.pushMedia(MessageType.VIDEO, 120, KEYFRAME);
    assert.equal(seen.length, 4);
  });
});
