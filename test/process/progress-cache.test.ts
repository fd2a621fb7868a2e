import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseStatsLine, PreludeParser, type ProgressBlock } from '../../src/process/ffmpeg/index.js';
import { ProgressTracker, type ProgressValues } from '../../src/process/progress/index.js';
import { FFMPEG_FIXTURES } from './support.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** Preludes of recorded runs: one video stream; video and audio to two outputs; HLS. */
const PRELUDES = ['testsrc-null.stderr.txt', 'av-two-outputs.stderr.txt', 'hls.stderr.txt'].map((name) => {
  const parser = new PreludeParser();
  for (const line of readFileSync(join(FFMPEG_FIXTURES, name), 'utf8').split(/\r\n|\r|\n/)) {
    if (parseStatsLine(line) === undefined) parser.push(line);
  }
  return parser.result();
});

// `values` keeps its last answer while computing anew would give the same; this must never show:
// every answer equals the straightforward computation at the same moment, however the reports,
// the per-frame statistics, the bytes seen by the server and the questions interleave (reports on
// time, late, stalled past the stall limit and past the window, counters starting over).
describe('progress values kept between reports', () => {
  it('are the values computed anew, on random report and question sequences', () => {
    let compared = 0;
    let kept = 0;
    let keptLater = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const random = seededRandom(seed);
      const clock = { ms: 1_700_000_000_000 + random() * 1e6 };
      const labels = { inputs: [{ id: 'in', address: 'a' }], outputs: [{ id: 'out', address: '-' }] };
      // The same events go to both; one is asked through `values`, the other through `computeValues`.
      const cached = new ProgressTracker(labels, () => clock.ms);
      const plain = new ProgressTracker(labels, () => clock.ms);
      const both = (act: (tracker: ProgressTracker) => void): void => {
        act(cached);
        act(plain);
      };
      const prelude = PRELUDES[Math.floor(random() * PRELUDES.length)];
      if (prelude !== undefined && random() < 0.9) both((tracker) => tracker.setPrelude(prelude));
      let frame = 0;
      let bytes = 0;
      let previous: { values: ProgressValues; ms: number } | undefined;
      const fps = 5 + random() * 25;
      for (let step = 0; step < 300; step++) {
        const roll = random();
        if (roll < 0.25) {
          // A report: usually on time, sometimes with ffmpeg's clock, sometimes a new run's counters.
          if (random() < 0.03) frame = 0;
          frame += Math.floor(random() * fps * 1.5);
          bytes += Math.floor(random() * 50_000);
          const block: ProgressBlock = {
            frame,
            fps: random() < 0.1 ? 0 : fps,
            streamQ: new Map([['0:0', Math.floor(random() * 30)]]),
            totalSizeBytes: bytes,
            outTimeSeconds: frame / fps,
            speed: random() * 2,
            dup: 0,
            drop: Math.floor(random() * 3),
            end: false,
          };
          both((tracker) => tracker.onProgressBlock(block));
        } else if (roll < 0.3) {
          const line = {
            file: 0,
            stream: 0,
            q: random() * 30,
            frameBytes: Math.floor(random() * 5000),
            keyframe: random() < 0.1,
          };
          both((tracker) => tracker.onVstats(line));
        } else if (roll < 0.33) {
          const index = Math.floor(random() * 2);
          const count = Math.floor(random() * 10_000);
          both((tracker) => tracker.addOutputBytes(index, count));
        } else if (roll < 0.35) {
          const count = Math.floor(random() * 10_000);
          both((tracker) => tracker.addInputBytes(0, count));
        } else {
          const actual = cached.values(clock.ms);
          assert.deepEqual(actual, plain.computeValues(clock.ms), `seed ${seed} step ${step}`);
          if (cached.values(clock.ms) === actual) kept++;
          // Kept from an earlier question, at another time: what the cache is for.
          if (previous !== undefined && previous.values === actual && previous.ms !== clock.ms) keptLater++;
          previous = { values: actual, ms: clock.ms };
          compared++;
        }
        // Time moves on: mostly small steps, sometimes a stall past 3 s or past the 10 s window,
        // sometimes not at all, rarely a clock stepping back.
        const move = random();
        if (move < 0.6) clock.ms += random() * 400;
        else if (move < 0.75) clock.ms += 900 + random() * 300;
        else if (move < 0.8) clock.ms += 3000 + random() * 9000;
        else if (move < 0.82) clock.ms -= random() * 50;
      }
    }
    assert.ok(compared > 50_000, `${compared} comparisons`);
    // The comparison above is empty if nothing is ever kept.
    assert.ok(kept > compared / 4, `${kept} of ${compared} answers kept`);
    // … and kept across time, not only when asked twice at the same millisecond.
    assert.ok(keptLater > compared / 8, `${keptLater} of ${compared} answers kept from an earlier time`);
  });
});
