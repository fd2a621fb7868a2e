import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { lavfiProcess, ok, sleep, waitFor, waitForState } from './support.js';

interface Series {
  name: string;
  labels: Record<string, string>;
  values: [number, number][];
}

async function query(
  server: TestServer,
  metrics: { name: string; labels?: Record<string, string> }[],
): Promise<Series[]> {
  const answer = await ok<{ metrics: Series[] }>(server, 'POST', '/metrics', { metrics });
  return answer.metrics;
}

function value(series: Series[], labels: Record<string, string>): number | undefined {
  const found = series.find((s) => Object.entries(labels).every(([key, wanted]) => s.labels[key] === wanted));
  return found?.values.at(-1)?.[1];
}

describe('process metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { metrics: { enable: true, enable_prometheus: true, interval_sec: 1 } },
    });
  });
  after(() => server.close());

  it('has the ffmpeg and restream state series from the start, zeros included', async () => {
    const series = await waitFor(
      async () => {
        const found = await query(server, [{ name: 'ffmpeg_process' }, { name: 'restream_state' }]);
        return found.length === 12 ? found : undefined;
      },
      5000,
      'the first collection',
    );
    for (const name of ['ffmpeg_process', 'restream_state']) {
      assert.deepEqual(
        series
          .filter((s) => s.name === name)
          .map((s) => s.labels.state)
          .sort(),
        ['failed', 'finished', 'finishing', 'killed', 'running', 'starting'],
      );
    }
  });

  it('counts the state entries of a process over start, stop and restarts (restream_process_states)', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('counted'));
    const command = (name: string) => ok(server, 'PUT', '/process/counted/command', { command: name });
    await command('start');
    await waitForState(server, 'counted', 'running', 15_000, 1);
    await command('stop');
    await command('restart');
    await waitForState(server, 'counted', 'running', 15_000, 1);
    await command('restart');
    await waitForState(server, 'counted', 'running', 15_000, 1);
    // start, stop (running → finishing → finished), restart of a stopped process, restart of a
    // running one (finishing → finished → starting → running).
    const expected = { starting: 3, running: 3, finishing: 2, finished: 2, failed: 0, killed: 0 };
    const counts = await waitFor<Record<string, number | undefined>>(
      async () => {
        const series = await query(server, [
          { name: 'restream_process_states', labels: { processid: '^counted$' } },
        ]);
        const found: Record<string, number | undefined> = {};
        for (const s of series) found[s.labels.state ?? ''] = s.values.at(-1)?.[1];
        return found.running === 3 && found.finished === 2 ? found : undefined;
      },
      5000,
      'the counts after the last restart',
    );
    assert.deepEqual(counts, expected);
    await ok(server, 'DELETE', '/process/counted');
  });

  it('reports a running process: fps near the source rate, growing frames, IO series and states', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('metered', {
        input: [{ id: 'src', address: 'testsrc=size=32x24:rate=10', options: ['-re', '-f', 'lavfi'] }],
        output: [
          { id: 'sink', address: '-', options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'null'] },
        ],
        autostart: true,
      }),
    );
    await waitForState(server, 'metered', 'running', 15_000, 1);
    await sleep(4000);
    const process = await query(server, [{ name: 'restream_process', labels: { processid: '^metered$' } }]);
    const fps = value(process, { name: 'fps' });
    assert.ok(fps !== undefined && fps > 7 && fps < 13, `fps ${fps}`);
    const frame = value(process, { name: 'frame' }) as number;
    assert.ok(frame > 10);
    assert.deepEqual(
      [...new Set(process.map((s) => `${s.labels.state}/${s.labels.order}`))],
      ['running/start'],
    );
    assert.deepEqual(process.map((s) => s.labels.name).sort(), [
      'bitrate',
      'cpu',
      'cpu_limit',
      'drop',
      'dup',
      'fps',
      'frame',
      'memory',
      'memory_limit',
      'packet',
      'q',
      'size',
      'speed',
      'time',
      'uptime',
    ]);
    assert.ok((value(process, { name: 'memory' }) as number) > 1024 * 1024, 'resident memory of ffmpeg');
    assert.ok((value(process, { name: 'time' }) as number) > 2);
    await waitFor(
      async () => {
        const later = await query(server, [
          { name: 'restream_process', labels: { processid: '^metered$', name: '^frame$' } },
        ]);
        return (value(later, {}) ?? 0) > frame;
      },
      5000,
      'frame to grow',
    );

    const io = await query(server, [{ name: 'restream_io', labels: { processid: '^metered$' } }]);
    const input = {
      processid: 'metered',
      type: 'input',
      id: 'src',
      address: 'testsrc=size=32x24:rate=10',
      index: '0',
      stream: '0',
      media: 'video',
    };
    const output = {
      processid: 'metered',
      type: 'output',
      id: 'sink',
      address: '-',
      index: '0',
      stream: '0',
      media: 'video',
    };
    for (const name of ['frame', 'fps', 'packet', 'pps', 'size', 'bitrate']) {
      assert.notEqual(value(io, { ...input, name }), undefined, `input ${name}`);
      assert.notEqual(value(io, { ...output, name }), undefined, `output ${name}`);
    }
    assert.notEqual(value(io, { ...output, name: 'q' }), undefined);
    assert.equal(value(io, { ...input, name: 'q' }), undefined, 'q only for outputs');
    // Real values where the reference server reports 0 with a stock ffmpeg.
    assert.ok((value(io, { ...output, name: 'frame' }) as number) > 10);
    const outputFps = value(io, { ...output, name: 'fps' }) as number;
    assert.ok(outputFps > 7 && outputFps < 13, `output fps ${outputFps}`);
    assert.ok((value(io, { ...output, name: 'size' }) as number) > 0, 'encoded bytes from -vstats');
    assert.ok((value(io, { ...output, name: 'bitrate' }) as number) > 0);
    assert.ok((value(io, { ...input, name: 'frame' }) as number) > 10);
    // The process's frame is its first video output stream's frame, in one collection.
    const frames = await query(server, [
      { name: 'restream_process', labels: { processid: '^metered$', name: '^frame$' } },
      { name: 'restream_io', labels: { processid: '^metered$', type: '^output$', name: '^frame$' } },
    ]);
    assert.equal(frames.length, 2);
    assert.equal(frames[0]?.values.at(-1)?.[1], frames[1]?.values.at(-1)?.[1], JSON.stringify(frames));

    const states = await query(server, [
      { name: 'restream_state' },
      { name: 'restream_process_states', labels: { processid: '^metered$' } },
      { name: 'ffmpeg_process' },
    ]);
    assert.equal(
      value(
        states.filter((s) => s.name === 'restream_state'),
        { state: 'running' },
      ),
      1,
    );
    assert.equal(
      value(
        states.filter((s) => s.name === 'restream_process_states'),
        { state: 'running' },
      ),
      1,
    );
    assert.equal(
      value(
        states.filter((s) => s.name === 'restream_process_states'),
        { state: 'starting' },
      ),
      1,
    );
    assert.ok(
      (value(
        states.filter((s) => s.name === 'ffmpeg_process'),
        { state: 'running' },
      ) as number) >= 1,
    );

    const scrape = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(scrape, /ffmpeg_process\{[^}]*name="fps"[^}]*process="metered"[^}]*\} [\d.]+/);
    assert.match(scrape, /ffmpeg_process_io\{[^}]*id="sink"[^}]*\}/);
    assert.match(scrape, /ffmpeg_states\{[^}]*state="running"[^}]*\} 1/);
    await ok(server, 'DELETE', '/process/metered');
  });
});
