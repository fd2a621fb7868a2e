import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import type { SrtChannels } from '../../src/ingest/srt/index.js';
import { firstHlsSegment, hlsRestreamProcess, livePublisherProcess } from '../helpers/hls-viewer.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok, runningCommandLine } from '../process/support.js';
import { publishSrt, SRT_SKIP, srtUrl } from './srt-support.js';

const TOKEN = 'srt-token-1';
const PASSPHRASE = 'srt-passphrase-1';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline)
      assert.fail(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    value = await read();
  }
  return value;
}

describe('SRT in the server: placeholders, API, sessions, metrics', { skip: SRT_SKIP }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        srt: { enable: true, address: '127.0.0.1:0', token: TOKEN, passphrase: PASSPHRASE },
        metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 120 },
        sessions: { ip_ignorelist: [], session_timeout_sec: 5 },
      },
    });
  });
  after(() => server.close());

  it('restreams {srt,name=x,mode=publish} of one process into memfs HLS by another, counted as srt sessions', async () => {
    assert.deepEqual(await ok(server, 'GET', '/srt'), {
      publisher: {},
      subscriber: {},
      connections: {},
      log: {},
    });
    await ok(server, 'POST', '/process', livePublisherProcess('pub', '{srt,name=x,mode=publish}', 'mpegts'));
    await until(
      () => ok<SrtChannels>(server, 'GET', '/srt'),
      (channels) => channels.publisher.x !== undefined,
      'x to be published',
    );
    await ok(server, 'POST', '/process', hlsRestreamProcess('restream', '{srt,name=x,mode=request}', 'x'));
    const bytes = await firstHlsSegment(server, 'x', 'restream');
    assert.ok(bytes.length > 1000 && bytes[0] === 0x47, 'a segment is MPEG-TS');

    // GET /api/v3/srt: who publishes and plays x, by socket id, with libsrt's statistics.
    const channels = await until(
      () => ok<SrtChannels>(server, 'GET', '/srt'),
      (answer) => answer.subscriber.x?.length === 1,
      'the restreamer as a player',
    );
    const publisherSocket = channels.publisher.x ?? -1;
    const playerSocket = channels.subscriber.x?.[0] ?? -1;
    assert.deepEqual(
      Object.keys(channels.connections).sort(),
      [String(publisherSocket), String(playerSocket)].sort(),
    );
    assert.ok((channels.connections[String(publisherSocket)]?.stats.recv_bytes ?? 0) > 10_000);
    assert.ok((channels.connections[String(playerSocket)]?.stats.sent_bytes ?? 0) > 10_000);
    assert.ok((channels.connections[String(playerSocket)]?.stats.sent_pkt ?? 0) > 10);

    // Token and passphrase never show in what the API reports about the processes.
    const state = JSON.stringify(await ok(server, 'GET', '/process/restream/state'));
    assert.ok(!state.includes(TOKEN) && !state.includes(PASSPHRASE), 'the secrets are masked');

    type Active = Record<string, { local: string; bytes_rx: number; bytes_tx: number; reference: string }[]>;
    const active = await until(
      () => ok<Active>(server, 'GET', '/session/active?collectors=srt'),
      (answer) =>
        (answer.srt ?? []).length === 2 &&
        (answer.srt ?? []).every((session) => session.bytes_rx + session.bytes_tx > 10_000),
      'two srt sessions with bytes',
    );
    const list = active.srt ?? [];
    assert.deepEqual(list.map((session) => session.local).sort(), ['play:x', 'publish:x']);
    assert.ok((list.find((session) => session.local === 'publish:x')?.bytes_rx ?? 0) > 10_000);
    assert.ok((list.find((session) => session.local === 'play:x')?.bytes_tx ?? 0) > 10_000);
    assert.equal(list[0]?.reference, 'x');
    const summary = await ok<Record<string, { active: { sessions: number } }>>(
      server,
      'GET',
      '/session?collectors=srt',
    );
    assert.equal(summary.srt?.active.sessions, 2);

    const rxBytes = await until(
      async () => {
        const response = await fetch(`${server.url}/api/v3/metrics`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ metrics: [{ name: 'session_rxbytes', labels: { collector: 'srt' } }] }),
        });
        const body = (await response.json()) as { metrics: { values: [number, number][] }[] };
        return body.metrics[0]?.values.at(-1)?.[1] ?? 0;
      },
      (value) => value > 10_000,
      'session_rxbytes{collector="srt"} to move',
    );
    assert.ok(rxBytes > 10_000);
    const exposition = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(exposition, /^session_active\{collector="srt",core="[^"]+"\} 2$/m);
    assert.match(exposition, /^session_tx_bytes\{collector="srt",core="[^"]+"\} [1-9]\d*$/m);

    await ok(server, 'PUT', '/process/pub/command', { command: 'stop' });
    await ok(server, 'PUT', '/process/restream/command', { command: 'stop' });
    await until(
      () => ok<SrtChannels>(server, 'GET', '/srt'),
      (answer) => Object.keys(answer.connections).length === 0,
      'the connections to end',
    );
  });

  it('gives each encoder run a token of its own for its own resource, never srt.token', async () => {
    const port = server.app.ingest.srt?.port();
    assert.ok(port !== undefined, 'the SRT server listens');
    await ok(
      server,
      'POST',
      '/process',
      livePublisherProcess('own', '{srt,name=own,mode=publish}', 'mpegts'),
    );
    // What any local user reads in /proc: the passphrase (every caller needs it), not the token.
    const argv = (await runningCommandLine(server, 'own')).join(' ');
    assert.ok(!argv.includes(TOKEN), `srt.token is in the encoder's argv: ${argv}`);
    const runToken = /streamid=own,mode:publish,token:([A-Za-z0-9_-]+)/.exec(argv)?.[1];
    assert.ok(runToken !== undefined, `a run token in ${argv}`);
    await until(
      () => ok<SrtChannels>(server, 'GET', '/srt'),
      (channels) => channels.publisher.own !== undefined,
      'own to be published',
    );

    // It opens its own resource and no other.
    const elsewhere = await publishSrt(srtUrl(port, `other,mode:publish,token:${runToken}`, PASSPHRASE), 1)
      .done;
    assert.notEqual(elsewhere.code, 0, 'the run token published a resource its run did not name');
    const state = JSON.stringify(await ok(server, 'GET', '/process/own/state'));
    assert.ok(!state.includes(runToken), 'the run token is masked');

    // Once the run ended, its token opens nothing, not even its own resource.
    await ok(server, 'PUT', '/process/own/command', { command: 'stop' });
    await until(
      () => ok<SrtChannels>(server, 'GET', '/srt'),
      (channels) => channels.publisher.own === undefined,
      'own to end',
    );
    const after = await publishSrt(srtUrl(port, `own,mode:publish,token:${runToken}`, PASSPHRASE), 1).done;
    assert.notEqual(after.code, 0, 'the token of an ended run published');
    const withServerToken = await publishSrt(srtUrl(port, `own,mode:publish,token:${TOKEN}`, PASSPHRASE), 1)
      .done;
    assert.equal(withServerToken.code, 0, withServerToken.stderr);
    await ok(server, 'DELETE', '/process/own');
  });
});

describe('SRT start-up errors', { skip: SRT_SKIP }, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-srt-start-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('names srt.address when the UDP port is in use', async () => {
    const blocker = createSocket('udp4');
    await new Promise<void>((resolve) => blocker.bind(0, '127.0.0.1', resolve));
    const { port } = blocker.address();
    try {
      const file = join(dir, 'config.json');
      await writeFile(
        file,
        JSON.stringify({
          address: '127.0.0.1:0',
          db: { dir: join(dir, 'db') },
          storage: { disk: { dir } },
          srt: { enable: true, address: `127.0.0.1:${port}` },
        }),
      );
      const { config } = await loadConfig({ CORE_CONFIGFILE: file }, dir);
      const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
      try {
        await assert.rejects(
          app.listen(),
          /^Error: srt\.address: cannot listen on "127\.0\.0\.1:\d+" \(UDP\): .*Address already in use/,
        );
      } finally {
        await app.close();
      }
    } finally {
      blocker.close();
    }
  });
});
