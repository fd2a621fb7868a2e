import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { playHls, type PlayerReport } from './hls-player.js';

const VIEWER = '127.0.0.2';

interface Series {
  name: string;
  labels: Record<string, string>;
  values: [number, number][];
}

/**
 * End to end (docs/storage.md#the-contract, docs/sessions.md#the-contract): a real ffmpeg process created over the API writes HLS into memfs with
 * PUT (and DELETE for old segments), a simulated player watches from a non-ignored address, and
 * the session and filesystem metrics carry what happened.
 */
describe('HLS end to end: ffmpeg → memfs → viewer', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 120 },
        sessions: { session_timeout_sec: 3 },
      },
    });
  });
  after(() => server.close());

  async function latest(name: string, labels: Record<string, string>): Promise<number | undefined> {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metrics: [{ name, labels }] }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { metrics: Series[] };
    const values = body.metrics[0]?.values;
    return values?.[values.length - 1]?.[1];
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function memfsFiles(): Promise<{ name: string }[]> {
    return (await (await fetch(`${server.url}/api/v3/fs/mem`)).json()) as { name: string }[];
  }

  it('counts the viewer, the ingest, the files, and closes the session into the history', async () => {
    const create = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'e2e',
        input: [{ id: 'in', address: 'testsrc=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
        output: [
          {
            id: 'hls',
            address: '{memfs}/{processid}.m3u8',
            options: [
              ...['-codec:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-b:v', '150k'],
              ...['-f', 'hls', '-hls_time', '1', '-hls_list_size', '4'],
              ...['-hls_flags', 'delete_segments', '-method', 'PUT'],
            ],
          },
        ],
        options: ['-loglevel', 'warning'],
        autostart: true,
      }),
    });
    assert.equal(create.status, 200, await create.clone().text());

    // ffmpeg has written the playlist and, with delete_segments, deleted old segments over HTTP.
    await until('ffmpeg to rotate segments in memfs', async () => {
      const names = (await memfsFiles()).map((file) => file.name);
      return names.includes('/e2e.m3u8') && !names.includes('/e2e0.ts') && names.length >= 4
        ? names
        : undefined;
    });

    const stop = new AbortController();
    const playing: Promise<PlayerReport> = playHls(`${server.url}/memfs/e2e.m3u8`, {
      localAddress: VIEWER,
      signal: stop.signal,
    });
    try {
      // Long enough for the 10-second bitrate windows to be full of the stream.
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      assert.equal(await latest('session_active', { collector: '^hls$' }), 1);
      assert.equal(await latest('session_active', { collector: '^hlsingress$' }), 1);
      const ingest = (await latest('session_rxbitrate', { collector: '^hlsingress$' })) ?? 0;
      const egress = (await latest('session_txbitrate', { collector: '^hls$' })) ?? 0;
      assert.ok(ingest > 50_000, `ingest ${ingest} bit/s`);
      // The viewer fetches what the encoder writes: the same rate, give or take a segment and headers.
      assert.ok(egress > ingest * 0.6 && egress < ingest * 1.6, `egress ${egress} vs ingest ${ingest} bit/s`);

      const active = (await (await fetch(`${server.url}/api/v3/session/active?collectors=hls`)).json()) as {
        hls: { remote: string; local: string; reference: string }[];
      };
      assert.deepEqual(
        active.hls.map((s) => [s.remote, s.local, s.reference]),
        [[VIEWER, '/memfs/e2e.m3u8', 'e2e']],
      );

      await until('filesystem_files{memfs} to equal the files in memfs', async () => {
        const metric = await latest('filesystem_files', { name: '^memfs$' });
        const files = (await memfsFiles()).length;
        return metric === files ? true : undefined;
      });
      assert.equal(await latest('filesystem_limit', { name: '^memfs$' }), -1);
      assert.equal(await latest('filesystem_limit', { name: '^diskfs$' }), -1);

      const exposition = await (await fetch(`${server.url}/metrics`)).text();
      assert.match(exposition, /^session_active\{collector="hls",core="[^"]+"\} 1$/m);
      assert.match(exposition, /^filesystem_files\{core="[^"]+",name="memfs"\} \d+$/m);
      assert.match(exposition, /^session_tx_bytes\{collector="hls",core="[^"]+"\} [1-9]\d*$/m);
    } finally {
      stop.abort();
    }
    const report = await playing;
    assert.equal(report.firstStatus, 200);
    assert.ok(report.sessionId !== undefined);
    assert.ok(report.segments >= 8, `segments ${report.segments}`);
    assert.equal(report.errors, 0);

    const totalWhilePlaying = (await latest('session_total', { collector: '^hls$' })) ?? 0;
    assert.ok(totalWhilePlaying >= 1, 'the total includes the active session');
    await until('the viewer session to close into the history', async () => {
      const summary = (await (await fetch(`${server.url}/api/v3/session?collectors=hls`)).json()) as {
        hls: { active: { sessions: number }; summary: { sessions: number; remote: Record<string, unknown> } };
      };
      return summary.hls.active.sessions === 0 && summary.hls.summary.remote[VIEWER] !== undefined
        ? true
        : undefined;
    });
    const total = await until('session_total to count the closed session', async () => {
      const [value, activeNow] = [
        await latest('session_total', { collector: '^hls$' }),
        await latest('session_active', { collector: '^hls$' }),
      ];
      return activeNow === 0 && value !== undefined && value >= 1 ? value : undefined;
    });
    assert.equal(total, totalWhilePlaying);
    assert.ok(((await latest('session_txbytes', { collector: '^hls$' })) ?? 0) >= report.bytes);

    assert.equal((await fetch(`${server.url}/api/v3/process/e2e`, { method: 'DELETE' })).status, 200);
  });
});
