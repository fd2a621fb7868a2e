import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FallbackSwitch,
  START_GRACE_MS,
  type LiveSource,
  type SwitchSettings,
} from '../../src/process/fallback/fallback-switch.js';
import { TAG_AUDIO, TAG_SCRIPT, TAG_VIDEO, type FlvTag } from '../../src/process/fallback/flv.js';
import type { StreamShape } from '../../src/process/fallback/stream-shape.js';

const SETTINGS: SwitchSettings = { timeoutMs: 1000, returnAfterMs: 2000, switchBackIntervalMs: 5000 };

/** AVC tags: sequence header (packet type 0), keyframe (frame type 1) or inter frame (2). */
function video(kind: 'header' | 'key' | 'inter', timestamp: number): FlvTag {
  const first = kind === 'inter' ? 0x27 : 0x17;
  return { type: TAG_VIDEO, timestamp, body: Buffer.from([first, kind === 'header' ? 0 : 1, 0, 0, 0]) };
}

function audio(timestamp: number): FlvTag {
  return { type: TAG_AUDIO, timestamp, body: Buffer.from([0xaf, 1, 0x21]) };
}

/** `onMetaData` with width and height (AMF0: string, then an object with two numbers). */
function metadata(width: number, height: number): FlvTag {
  const name = Buffer.from('onMetaData');
  const field = (key: string, value: number): Buffer => {
    const bytes = Buffer.alloc(2 + key.length + 9);
    bytes.writeUInt16BE(key.length, 0);
    bytes.write(key, 2, 'latin1');
    bytes[2 + key.length] = 0;
    bytes.writeDoubleBE(value, 3 + key.length);
    return bytes;
  };
  const body = Buffer.concat([
    Buffer.from([2, 0, name.length]),
    name,
    Buffer.from([3]),
    field('width', width),
    field('height', height),
    Buffer.from([0, 0, 9]),
  ]);
  return { type: TAG_SCRIPT, timestamp: 0, body };
}

function harness(settings = SETTINGS) {
  let now = 0;
  const written: FlvTag[] = [];
  const switches: { at: number; to: LiveSource; reason: string }[] = [];
  const shapes: (StreamShape | undefined)[] = [];
  let restarts = 0;
  let fallbackStops = 0;
  const sw = new FallbackSwitch(settings, {
    now: () => now,
    write: (tag) => written.push(tag),
    startFallback: (shape) => shapes.push(shape),
    stopFallback: () => fallbackStops++,
    restartPrimary: () => restarts++,
    onSwitch: (to, reason) => switches.push({ at: now, to, reason }),
  });
  return {
    sw,
    written,
    switches,
    shapes,
    get restarts() {
      return restarts;
    },
    get fallbackStops() {
      return fallbackStops;
    },
    /** Moves the clock by `ms` in steps of 100 ms, checking at each as the relay does. */
    advance(ms: number, each?: (t: number) => void) {
      for (let step = 0; step < ms; step += 100) {
        now += 100;
        each?.(now);
        sw.check();
      }
    },
    get now() {
      return now;
    },
  };
}

/** A 25 fps source: a keyframe every second, audio beside each frame. */
function frames(from: number, count: number, startIndex: number): FlvTag[] {
  const tags: FlvTag[] = [];
  for (let index = startIndex; index < startIndex + count; index++) {
    const timestamp = from + (index - startIndex) * 40;
    tags.push(video(index % 25 === 0 ? 'key' : 'inter', timestamp), audio(timestamp));
  }
  return tags;
}

function assertMonotonic(tags: FlvTag[]): void {
  for (const type of [TAG_AUDIO, TAG_VIDEO]) {
    const times = tags.filter((tag) => tag.type === type).map((tag) => tag.timestamp);
    for (let index = 1; index < times.length; index++)
      assert.ok(
        (times[index] as number) >= (times[index - 1] as number),
        `type ${type} goes back at ${index}`,
      );
  }
}

function largestVideoGap(tags: FlvTag[]): number {
  const times = tags.filter((tag) => tag.type === TAG_VIDEO && tag.body[1] !== 0).map((tag) => tag.timestamp);
  let gap = 0;
  for (let index = 1; index < times.length; index++)
    gap = Math.max(gap, (times[index] as number) - (times[index - 1] as number));
  return gap;
}

describe('fallback switch', () => {
  it('switches over one timeout after the primary stalls and back at a keyframe once it is stable, on one timeline', () => {
    const h = harness();
    h.sw.onPrimaryTag(metadata(640, 360));
    h.sw.onPrimaryTag(video('header', 5000));
    // The primary starts mid-stream (timestamps from 5 s): the encoder's timeline starts at 0.
    const primary = frames(5000, 50, 0);
    for (const tag of primary) {
      h.advance(0);
      h.sw.onPrimaryTag(tag);
    }
    assert.equal(h.written[0]?.body[1], 0, 'the sequence header comes first');
    assert.equal(h.written[1]?.timestamp, 0);
    // Stall: nothing for a timeout.
    h.advance(900);
    assert.equal(h.sw.live, 'primary');
    h.advance(100);
    assert.equal(h.sw.live, 'fallback');
    assert.deepEqual(
      h.switches.map((s) => [s.at, s.to]),
      [[1000, 'fallback']],
    );
    assert.equal(h.shapes[0]?.width, 640, 'the fallback is encoded to the primary shape');
    assert.equal(h.restarts, 1, 'the stalled primary feeder is replaced');
    const before = h.written.length;
    // The fallback's feeder starts at 0 with an inter frame that is skipped, then a keyframe.
    h.sw.onFallbackTag(video('header', 0));
    h.sw.onFallbackTag(video('inter', 0));
    for (const tag of frames(40, 100, 25)) {
      h.advance(0);
      h.sw.onFallbackTag(tag);
    }
    assert.ok(h.written.length > before);
    // Back: the primary delivers again; it must be stable for 2 s, then it joins at a keyframe.
    const back = frames(90_000, 100, 1);
    back.forEach((tag, index) => {
      if (index % 2 === 0) h.advance(100);
      h.sw.onPrimaryTag(tag);
      if (index % 2 === 0) h.sw.onFallbackTag(video('inter', 4040 + index * 20));
    });
    assert.equal(h.sw.live, 'primary');
    const back_ = h.switches[1];
    assert.equal(back_?.to, 'primary');
    assert.ok((back_?.at ?? 0) - 1000 - 100 >= 2000, 'not before 2 s of stability');
    assert.equal(h.fallbackStops, 1);
    assertMonotonic(h.written);
    assert.ok(largestVideoGap(h.written) <= 40, `no gap in the timeline: ${largestVideoGap(h.written)}`);
  });

  it('switches over at once when the primary ends, and starts on the fallback when the primary never comes', () => {
    const h = harness();
    for (const tag of frames(0, 10, 0)) h.sw.onPrimaryTag(tag);
    h.sw.onPrimaryEnded();
    assert.equal(h.sw.live, 'fallback');
    assert.match(h.switches[0]?.reason ?? '', /primary ended/);

    const cold = harness();
    cold.advance(SETTINGS.timeoutMs + START_GRACE_MS - 100);
    assert.equal(cold.sw.live, 'primary', 'a feeder gets its start-up grace');
    cold.advance(100);
    assert.equal(cold.sw.live, 'fallback');
    assert.equal(cold.shapes[0], undefined, 'no shape known: the default');
  });

  it('does not switch back to a flapping primary more often than the interval allows', () => {
    const h = harness({ timeoutMs: 1000, returnAfterMs: 500, switchBackIntervalMs: 5000 });
    let timestamp = 0;
    let index = 0;
    const deliver = (): void => {
      // 25 fps: four frames per 100 ms step would be too many; one per step keeps it simple.
      const tag = video(index % 5 === 0 ? 'key' : 'inter', timestamp);
      h.sw.onPrimaryTag(tag);
      h.sw.onFallbackTag(video(index % 5 === 0 ? 'key' : 'inter', timestamp));
      timestamp += 100;
      index++;
    };
    // 20 s of a primary that is up 1.5 s, down 1.5 s.
    for (let cycle = 0; cycle < 7; cycle++) {
      h.advance(1500, deliver);
      h.sw.onPrimaryEnded();
      h.advance(1500, () => h.sw.onFallbackTag(video('inter', (timestamp += 100))));
    }
    const backs = h.switches.filter((s) => s.to === 'primary').map((s) => s.at);
    for (let i = 1; i < backs.length; i++)
      assert.ok((backs[i] as number) - (backs[i - 1] as number) >= 5000, `switch-backs ${backs.join(', ')}`);
    assert.ok(backs.length >= 2, 'it does switch back');
    assertMonotonic(h.written);
  });
});
