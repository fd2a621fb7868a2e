import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { firstHlsSegment, hlsRestreamProcess, livePublisherProcess } from '../helpers/hls-viewer.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok, runningCommandLine, waitForState } from '../process/support.js';
import { play, publish, waitFor } from './rtmp-support.js';

const TOKEN = 'tok3n-secret';

function rtmpPort(server: TestServer): number {
  const port = server.app.ingest.rtmp?.ports()[0];
  assert.ok(port !== undefined, 'the RTMP server listens');
  return port;
}

describe('RTMP in the server: placeholders, API, sessions, metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        rtmp: { enable: true, address: '127.0.0.1:0', app: '/live', token: TOKEN },
        metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 120 },
        sessions: { ip_ignorelist: [], session_timeout_sec: 5 },
      },
    });
  });
  after(() => server.close());

  it('restreams {rtmp,name=x} published by one process into memfs HLS by another, counted as rtmp sessions', async () => {
    assert.deepEqual(await ok(server, 'GET', '/rtmp'), []);
    await ok(server, 'POST', '/process', livePublisherProcess('pub', '{rtmp,name=x}', 'flv'));
    const deadline = Date.now() + 20_000;
    let live: { name: string }[] = [];
    while (Date.now() < deadline) {
      live = await ok<{ name: string }[]>(server, 'GET', '/rtmp');
      if (live.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.deepEqual(live, [{ name: '/live/x' }]);

    await ok(server, 'POST', '/process', hlsRestreamProcess('restream', '{rtmp,name=x}', 'x'));
    // A viewer plays what the restreamer wrote: the playlist lists segments that download.
    const bytes = await firstHlsSegment(server, 'x', 'restream');
    assert.ok(bytes.length > 1000 && bytes[0] === 0x47, 'a segment is MPEG-TS');

    // The token never shows in what the API reports about the processes.
    const state = await ok<{ command: string[] }>(server, 'GET', '/process/restream/state');
    assert.ok(!JSON.stringify(state).includes(TOKEN), 'the token is masked');

    // Publisher and player are rtmp sessions whose bytes move.
    type Active = Record<string, { local: string; bytes_rx: number; bytes_tx: number; reference: string }[]>;
    let active: Active = {};
    const sessionsBy = Date.now() + 10_000;
    while (Date.now() < sessionsBy) {
      active = await ok<Active>(server, 'GET', '/session/active?collectors=rtmp');
      const list = active.rtmp ?? [];
      if (list.length === 2 && list.every((session) => session.bytes_rx + session.bytes_tx > 10_000)) break;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const list = active.rtmp ?? [];
    assert.deepEqual(list.map((session) => session.local).sort(), ['play:/live/x', 'publish:/live/x']);
    const publisher = list.find((session) => session.local.startsWith('publish'));
    const player = list.find((session) => session.local.startsWith('play'));
    assert.ok((publisher?.bytes_rx ?? 0) > 10_000, 'the publisher sent bytes');
    assert.ok((player?.bytes_tx ?? 0) > 10_000, 'the player was sent bytes');
    assert.equal(publisher?.reference, 'x');

    const summary = await ok<Record<string, { active: { sessions: number } }>>(
      server,
      'GET',
      '/session?collectors=rtmp',
    );
    assert.equal(summary.rtmp?.active.sessions, 2);

    let rxBytes = 0;
    const metricsBy = Date.now() + 10_000;
    while (rxBytes === 0 && Date.now() < metricsBy) {
      const response = await fetch(`${server.url}/api/v3/metrics`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metrics: [{ name: 'session_rxbytes', labels: { collector: 'rtmp' } }] }),
      });
      const body = (await response.json()) as { metrics: { values: [number, number][] }[] };
      rxBytes = body.metrics[0]?.values.at(-1)?.[1] ?? 0;
      if (rxBytes === 0) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.ok(rxBytes > 10_000, 'session_rxbytes{collector="rtmp"} moves');
    const exposition = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(exposition, /^session_active\{collector="rtmp",core="[^"]+"\} 2$/m);
    assert.match(exposition, /^session_tx_bytes\{collector="rtmp",core="[^"]+"\} [1-9]\d*$/m);

    await ok(server, 'PUT', '/process/pub/command', { command: 'stop' });
    await ok(server, 'PUT', '/process/restream/command', { command: 'stop' });
  });

  it('refuses a publisher with a wrong token and lets an ffmpeg player with the token play', async () => {
    const port = rtmpPort(server);
    const refused = await publish(`rtmp://127.0.0.1:${port}/live/y?token=wrong`, 1).done;
    assert.notEqual(refused.code, 0);
    const publisher = publish(`rtmp://127.0.0.1:${port}/live/y?token=${TOKEN}`, 4);
    await waitFor(() => server.app.ingest.rtmp?.channels().includes('/live/y') ?? false, '/live/y');
    const player = await play(`rtmp://127.0.0.1:${port}/live/y/${TOKEN}`, 1).done;
    assert.equal(player.code, 0, player.stderr);
    assert.equal((await publisher.done).code, 0);
  });

  it('gives each encoder run a token of its own for its own stream, never rtmp.token', async () => {
    const port = rtmpPort(server);
    await ok(server, 'POST', '/process', livePublisherProcess('own', '{rtmp,name=own}', 'flv'));
    // What any local user reads in /proc: not the server's token, but one of this run's own.
    const argv = (await runningCommandLine(server, 'own')).join(' ');
    assert.ok(!argv.includes(TOKEN), `rtmp.token is in the encoder's argv: ${argv}`);
    const runToken = new RegExp(`rtmp://127\\.0\\.0\\.1:${port}/live/own\\?token=([A-Za-z0-9_-]+)`).exec(
      argv,
    )?.[1];
    assert.ok(runToken !== undefined, `a run token in ${argv}`);
    await waitFor(() => server.app.ingest.rtmp?.channels().includes('/live/own') ?? false, '/live/own');

    // It plays its own stream, opens no other, and the API never shows it.
    const player = await play(`rtmp://127.0.0.1:${port}/live/own?token=${runToken}`, 0.5).done;
    assert.equal(player.code, 0, player.stderr);
    const elsewhere = await publish(`rtmp://127.0.0.1:${port}/live/other?token=${runToken}`, 1).done;
    assert.notEqual(elsewhere.code, 0, 'the run token published a stream its run did not name');
    const state = JSON.stringify(await ok(server, 'GET', '/process/own/state'));
    assert.ok(!state.includes(runToken), 'the run token is masked');

    // A probe of an input reading the stream gets a token of its own too, and shows none.
    await ok(server, 'POST', '/process', {
      id: 'reader',
      input: [{ id: 'in', address: '{rtmp,name=own}', options: [] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    });
    const probe = await ok<{ streams: unknown[]; log: string[] }>(server, 'GET', '/process/reader/probe');
    assert.ok(probe.streams.length > 0, probe.log.join('\n'));
    assert.ok(!JSON.stringify(probe).includes(TOKEN), 'the probe shows rtmp.token');
    // What that probe runs (a probe lives too briefly to read it in /proc): a token of its own,
    // hidden in what it prints, and worth nothing once the probe released it.
    const prepared = server.app.processes.probeSource.probeArgs('reader');
    const probeArgv = prepared.args.join(' ');
    const probeToken = /\/live\/own\?token=([A-Za-z0-9_-]+)/.exec(probeArgv)?.[1];
    assert.ok(probeToken !== undefined && probeToken !== runToken && !probeArgv.includes(TOKEN), probeArgv);
    assert.ok(!prepared.mask(`from '${probeArgv}' ${probeToken}`).includes(probeToken), 'masked');
    prepared.release();
    const released = await play(`rtmp://127.0.0.1:${port}/live/own?token=${probeToken}`, 0.5).done;
    assert.notEqual(released.code, 0, 'the token of a released probe played');

    // An input that refers to that output (`#own:output=out`) reads with a token of its own run.
    await ok(server, 'POST', '/process', {
      id: 'follower',
      input: [{ id: 'in', address: '#own:output=out', options: [] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      autostart: true,
    });
    const followerArgv = (await runningCommandLine(server, 'follower')).join(' ');
    assert.ok(!followerArgv.includes(TOKEN), `rtmp.token is in the follower's argv: ${followerArgv}`);
    assert.match(followerArgv, new RegExp(`/live/own\\?token=(?!${runToken})[A-Za-z0-9_-]+`));
    await waitForState(server, 'follower', 'running', 20_000, 10);
    await ok(server, 'DELETE', '/process/follower');

    // Once the run ended, its token opens nothing, not even its own path.
    await ok(server, 'PUT', '/process/own/command', { command: 'stop' });
    await waitFor(() => !(server.app.ingest.rtmp?.channels().includes('/live/own') ?? true), 'own to end');
    const after = await publish(`rtmp://127.0.0.1:${port}/live/own?token=${runToken}`, 1).done;
    assert.notEqual(after.code, 0, 'the token of an ended run published');
    const withServerToken = await publish(`rtmp://127.0.0.1:${port}/live/own?token=${TOKEN}`, 1).done;
    assert.equal(withServerToken.code, 0, withServerToken.stderr);
    await ok(server, 'DELETE', '/process/reader');
    await ok(server, 'DELETE', '/process/own');
  });
});

describe('RTMP start-up errors', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-rtmp-start-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function startWith(rtmp: Record<string, unknown>, tls: Record<string, string> = {}): Promise<string> {
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        address: '127.0.0.1:0',
        db: { dir: join(dir, 'db') },
        storage: { disk: { dir: dir } },
        rtmp,
        tls,
      }),
    );
    const { config } = await loadConfig({ CORE_CONFIGFILE: file }, dir);
    const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
    try {
      await app.listen();
      return 'started';
    } catch (error) {
      return (error as Error).message;
    } finally {
      await app.close();
    }
  }

  it('names rtmp.address when the port is in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const message = await startWith({ enable: true, address: `127.0.0.1:${port}` });
      assert.match(message, /^rtmp\.address: cannot listen on "127\.0\.0\.1:\d+": .*EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('names tls.cert_file for a missing or bad certificate, and serves RTMPS with a good one', async () => {
    const missing = await startWith(
      { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: '127.0.0.1:0' },
      { cert_file: join(dir, 'nope.pem'), key_file: join(dir, 'nope.key') },
    );
    assert.match(missing, /^tls\.cert_file: cannot read/);
    await writeFile(join(dir, 'bad.pem'), 'not a certificate');
    const bad = await startWith(
      { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: '127.0.0.1:0' },
      { cert_file: join(dir, 'bad.pem'), key_file: join(dir, 'bad.pem') },
    );
    assert.match(bad, /^tls\.cert_file, tls\.key_file: not a usable certificate/);

    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const server = await startServer({
      config: {
        rtmp: { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: '127.0.0.1:0' },
        tls: { cert_file: cert, key_file: key },
      },
    });
    try {
      const tlsPort = server.app.ingest.rtmp?.ports()[1];
      assert.ok(tlsPort !== undefined);
      const publisher = publish(`rtmps://127.0.0.1:${tlsPort}/live/s`, 3);
      await waitFor(
        () => server.app.ingest.rtmp?.channels().includes('/live/s') ?? false,
        'the RTMPS publisher',
      );
      const player = await play(`rtmp://127.0.0.1:${rtmpPort(server)}/live/s`, 1).done;
      assert.equal(player.code, 0, player.stderr);
      assert.equal((await publisher.done).code, 0);
    } finally {
      await server.close();
    }
  });
});
