import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { withInputHeader, parseInputHeader } from '../../src/process/config/memfs-inputs.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { getState, lavfiProcess, ok, sleep, waitFor, type ProcessState } from './support.js';

interface Series {
  labels: Record<string, string>;
  values: [number, number][];
}

const MEMFS = 'http://user:pw@127.0.0.1:8080/memfs';

describe('memfs input header', () => {
  it('parses a process id and an input index, and ignores anything else', () => {
    assert.deepEqual(parseInputHeader('cam-1/0'), { processId: 'cam-1', input: 0 });
    assert.deepEqual(parseInputHeader(' b_2.x/12 '), { processId: 'b_2.x', input: 12 });
    for (const garbage of [
      undefined,
      ['a/0', 'a/0'],
      '',
      'a',
      'a/',
      '/0',
      'a/0/1',
      'a/-1',
      'a/01',
      'a/1e3',
      'a/99999',
      'a b/0',
      'é/0',
      `${'x'.repeat(201)}/0`,
    ]) {
      assert.equal(parseInputHeader(garbage), undefined, JSON.stringify(garbage));
    }
  });

  it("names inputs under the memfs base URL only, and never replaces the user's -headers", () => {
    const io = { id: 'in', address: 'http://127.0.0.1:8080/memfs/a.m3u8', options: ['-re'], cleanup: [] };
    assert.deepEqual(withInputHeader(io, 1, 'b', MEMFS).options, [
      '-re',
      '-headers',
      'X-Streamcore-Input: b/1\r\n',
    ]);
    const other = { ...io, address: 'http://127.0.0.1:8080/memfsx/a.m3u8' };
    assert.equal(withInputHeader(other, 0, 'b', MEMFS), other);
    const own = { ...io, options: ['-headers', 'X-Mine: 1\r\n'] };
    assert.equal(withInputHeader(own, 0, 'b', MEMFS), own);
    assert.equal(withInputHeader(io, 0, 'with space', MEMFS), io);
  });
});

describe('bytes that process inputs read from memfs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        metrics: { enable: true, interval_sec: 1 },
        storage: { memory: { auth: { password: 'hidden-pw' } } },
      },
    });
  });
  after(() => server.close());

  it('are the input size and bitrate of the reading process, and a viewer adds nothing', async (t) => {
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('hlsa'),
      input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'hls',
          address: '{memfs}/a.m3u8',
          options: [
            ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5'],
            // Segments stay: the test reads one several seconds after listing it, longer on a busy machine.
            ...['-f', 'hls', '-hls_time', '1', '-hls_list_size', '4'],
            ...['-method', 'PUT'],
          ],
        },
      ],
      autostart: true,
    });
    await waitFor(
      async () => (await fetch(`${server.url}/memfs/a.m3u8`)).status === 200,
      10_000,
      'the playlist of A',
    );
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('hlsb'),
      input: [{ id: 'src', address: '{memfs}/a.m3u8', options: [] }],
      output: [{ id: 'sink', address: '-', options: ['-c', 'copy', '-f', 'null'] }],
      autostart: true,
    });
    const inputOf = (state: ProcessState) => state.progress.inputs[0] ?? {};
    const first = await waitFor(
      async () => {
        const state = await getState(server, 'hlsb');
        return (inputOf(state).size_kb as number) > 0 ? state : undefined;
      },
      8000,
      'bytes read by B',
    );
    // The header is the server's, not the user's: it is on the encoder's command line, not in state.command.
    const cmdline = (await readFile(`/proc/${first.pid}/cmdline`, 'utf8')).split('\0');
    assert.ok(cmdline.includes('X-Streamcore-Input: hlsb/0\r\n'), cmdline.join(' '));
    assert.ok(!first.command.some((arg) => arg.includes('X-Streamcore-Input')), first.command.join(' '));
    const grown = await waitFor(
      async () => {
        const state = await getState(server, 'hlsb');
        return (inputOf(state).size_kb as number) > (inputOf(first).size_kb as number) &&
          (inputOf(state).bitrate_kbit as number) > 0
          ? state
          : undefined;
      },
      5000,
      'the bytes read by B to grow',
    );
    const a = await getState(server, 'hlsa');
    t.diagnostic(
      `B input ${String(inputOf(grown).size_kb)} KiB at ${String(inputOf(grown).bitrate_kbit)} kbit/s; ` +
        `A output ${String(a.progress.outputs[0]?.size_kb)} KiB at ${String(a.progress.outputs[0]?.bitrate_kbit)} kbit/s`,
    );

    // The store holds what the collector saw each second; wait for a collection with both.
    const last = (series: Series[], name: string) =>
      series.find((s) => s.labels.name === name)?.values.at(-1)?.[1] ?? 0;
    const io = await waitFor(
      async () => {
        const answer = await ok<{ metrics: Series[] }>(server, 'POST', '/metrics', {
          metrics: [{ name: 'restream_io', labels: { processid: '^hlsb$', type: '^input$' } }],
        });
        return last(answer.metrics, 'size') > 0 && last(answer.metrics, 'bitrate') > 0
          ? answer.metrics
          : undefined;
      },
      5000,
      "restream_io size and bitrate of B's input",
    );
    t.diagnostic(`restream_io: size ${last(io, 'size')} bytes, bitrate ${last(io, 'bitrate')} bit/s`);

    // B paused: only reads from elsewhere could move its counter now.
    process.kill(grown.pid, 'SIGSTOP');
    try {
      await sleep(700);
      const files = await ok<{ name: string }[]>(server, 'GET', '/fs/mem');
      const segment = files
        .map((file) => file.name)
        .filter((name) => name.endsWith('.ts'))
        .sort()
        .at(-1);
      assert.ok(segment !== undefined);
      const before = inputOf(await getState(server, 'hlsb')).size_kb as number;
      let viewerBytes = 0;
      for (const header of [undefined, 'hlsb/0/1', 'hlsb/7', 'nosuch/0', 'hlsb/-1', 'hlsb/0 extra']) {
        for (const path of ['/memfs/a.m3u8', `/memfs${segment}`]) {
          const response = await fetch(`${server.url}${path}`, {
            headers: header === undefined ? {} : { 'x-streamcore-input': header },
          });
          assert.equal(response.status, 200, `${path} with ${String(header)}`);
          viewerBytes += (await response.arrayBuffer()).byteLength;
        }
      }
      // A HEAD transfers no body, even when it names B's input.
      const head = await fetch(`${server.url}/memfs${segment}`, {
        method: 'HEAD',
        headers: { 'x-streamcore-input': 'hlsb/0' },
      });
      assert.equal(head.status, 200);
      await sleep(200);
      assert.equal(
        inputOf(await getState(server, 'hlsb')).size_kb,
        before,
        `viewers read ${viewerBytes} bytes`,
      );
      // The header is what attributes a read: the same segment, named as B's input, counts.
      let named = 0;
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${server.url}/memfs${segment}`, {
          headers: { 'x-streamcore-input': 'hlsb/0' },
        });
        assert.equal(response.status, 200, `${segment} named as B's input`);
        named += (await response.arrayBuffer()).byteLength;
      }
      await sleep(200);
      const afterNamed = inputOf(await getState(server, 'hlsb')).size_kb as number;
      assert.ok(
        afterNamed - before >= Math.floor(named / 1024) - 1 && afterNamed > before,
        `${named} bytes named`,
      );
    } finally {
      process.kill(grown.pid, 'SIGCONT');
    }
    await ok(server, 'DELETE', '/process/hlsb');
    await ok(server, 'DELETE', '/process/hlsa');
  });
});
