import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  parseStatsLine,
  parseVstatsLine,
  PreludeParser,
  ProgressBlockParser,
} from '../../src/process/ffmpeg/index.js';
import { ProgressTracker } from '../../src/process/progress/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { FFMPEG_FIXTURES, getState, ok, sleep } from './support.js';

const lines = (name: string): string[] =>
  readFileSync(join(FFMPEG_FIXTURES, name), 'utf8').split(/\r\n|\r|\n/);

/** A tracker fed the prelude of a recorded run, on a clock the test moves. */
function recordedTracker(stderr: string, clock: { ms: number }): ProgressTracker {
  const tracker = new ProgressTracker(
    { inputs: [{ id: 'in', address: 'testsrc' }], outputs: [{ id: 'out', address: '-' }] },
    () => clock.ms,
  );
  const prelude = new PreludeParser();
  for (const line of lines(stderr)) {
    if (parseStatsLine(line) === undefined && prelude.push(line)) tracker.setPrelude(prelude.result());
  }
  return tracker;
}

describe('progress rates', () => {
  it('measures fps between the reports ffmpeg sends, from its second report on', () => {
    const clock = { ms: 10_000 };
    const tracker = recordedTracker('testsrc-null.stderr.txt', clock);
    const blocks = new ProgressBlockParser();
    const readings: number[] = [];
    // The recorded run: a 10 fps source, one block per second; the first one at frame 1.
    for (const line of lines('testsrc-null.progress.txt')) {
      const block = blocks.push(line);
      // The regular reports only: the last one comes whenever the run ends.
      if (block === undefined || block.end) continue;
      tracker.onProgressBlock(block);
      // Read half a second after each report, as a client polling at any time would.
      readings.push(tracker.values(clock.ms + 500).fps);
      clock.ms += 1000;
    }
    // ffmpeg's first report (frame 1, fps 0) has no clock and is no sample; the second gives
    // ffmpeg's own figure; from the third on, frames over ffmpeg's clock (frame / fps), not over
    // the arrival times (exactly 1 s apart here, which would give exactly 10).
    const at = (frame: number, fps: number): number => frame / fps;
    const expected = [0, 10.89, 10 / (at(21, 10.4) - at(11, 10.89)), 20 / (at(31, 10.26) - at(11, 10.89))];
    assert.equal(readings.length, 4);
    readings.forEach((reading, index) =>
      assert.ok(Math.abs(reading - (expected[index] ?? NaN)) < 0.001, `${readings.join(', ')}`),
    );
    const out = tracker.values(clock.ms - 500).outputs[0];
    assert.ok(out !== undefined);
    assert.ok(Math.abs(out.framerate.min - (expected[2] ?? 0)) < 0.001, JSON.stringify(out.framerate));
    assert.ok(Math.abs(out.framerate.max - (expected[3] ?? 0)) < 0.001, JSON.stringify(out.framerate));
    assert.ok(out.framerate.avg > 9.5 && out.framerate.avg < 10.5, JSON.stringify(out.framerate));
  });

  it('counts key frames from -vstats and passes them to the inputs that feed the stream', () => {
    const clock = { ms: 0 };
    const tracker = new ProgressTracker(
      {
        inputs: [
          { id: 'video', address: 'testsrc' },
          { id: 'audio', address: 'sine' },
        ],
        outputs: [
          { id: 'ts', address: 'out.ts' },
          { id: 'null', address: '-' },
        ],
      },
      () => clock.ms,
    );
    const prelude = new PreludeParser();
    for (const line of lines('av-two-outputs.stderr.txt')) {
      if (parseStatsLine(line) === undefined && prelude.push(line)) tracker.setPrelude(prelude.result());
    }
    const parsed = lines('av-two-outputs.vstats.txt').map(parseVstatsLine);
    const keyframes = parsed.filter((line) => line?.keyframe === true).length;
    assert.ok(keyframes >= 1);
    for (const line of parsed) if (line !== undefined) tracker.onVstats(line);
    const values = tracker.values(clock.ms);
    assert.equal(values.outputs[0]?.keyframe, keyframes);
    assert.equal(values.inputs[0]?.keyframe, keyframes);
    assert.equal(values.outputs[1]?.keyframe, 0, 'a copied stream: ffmpeg does not tell');
    assert.equal(values.outputs[0]?.extradataBytes, 0);
  });
});

describe('progress of a real 25 fps process', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('reads about 25 fps from its first measured second on, never the start-up burst', async () => {
    await ok(server, 'POST', '/process', {
      id: 'live25',
      input: [{ id: 'in', address: 'testsrc=size=160x120:rate=25', options: ['-re', '-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      options: ['-loglevel', 'info'],
      autostart: true,
    });
    const readings: { atMs: number; fps: number }[] = [];
    const started = Date.now();
    while (Date.now() - started < 6000) {
      const state = await getState(server, 'live25');
      if (state.exec === 'running' && state.progress.fps > 0)
        readings.push({ atMs: Date.now() - started, fps: state.progress.fps });
      await sleep(250);
    }
    const shown = readings.map((reading) => `${reading.atMs}ms ${reading.fps}`).join(', ');
    assert.ok(readings.length >= 5, shown);
    // Before: the stream read 0, then 49, 31, 27… and the process 15, 16, 17… for 10 s; on a
    // loaded machine, stamping reports by their arrival gave 35 and more.
    for (const reading of readings) assert.ok(reading.fps >= 20 && reading.fps <= 27, shown);
    const state = await getState(server, 'live25');
    const [output] = state.progress.outputs as {
      keyframe: number;
      framerate: { min: number; max: number; avg: number };
    }[];
    assert.ok(output !== undefined);
    assert.equal(typeof output.keyframe, 'number');
    assert.ok(output.framerate.avg > 15 && output.framerate.avg <= 27, JSON.stringify(output.framerate));
    assert.ok(output.framerate.min <= output.framerate.avg && output.framerate.avg <= output.framerate.max);
    await ok(server, 'DELETE', '/process/live25');
  });
});
