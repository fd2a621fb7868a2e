import assert from 'node:assert/strict';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createServerLogger, LogBuffer } from '../../src/log/index.js';
import type { RtmpServer } from '../../src/ingest/index.js';
import { RtmpTestClient } from '../helpers/rtmp-client.js';
import { rawRequest } from '../storage/raw-request.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, getReport, isAlive, lavfiProcess, ok, waitFor, waitForState } from '../process/support.js';
import { freePort } from '../helpers/free-port.js';

/**
 * What the Restreamer UI's Save + Restart does (PUT /api/v3/config, GET /api/v3/config/reload),
 * against a server with a running encoder: the changed keys take effect, the encoder keeps its pid.
 */
describe('config reload: settings take effect while processes keep running', () => {
  let server: TestServer;
  let pid: number;
  before(async () => {
    const buffer = new LogBuffer(1000);
    const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
    server = await startServer({
      logger: createServerLogger('info', buffer, discard),
      logBuffer: buffer,
      config: { rtmp: { enable: true, address: '127.0.0.1:0', token: 'old-token' } },
    });
    // An encoder that writes HLS into memfs through the server's HTTP address.
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('keeps-running', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/keeps.m3u8',
            options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'hls', '-hls_time', '1'],
          },
        ],
        autostart: true,
      }),
    );
    pid = (await waitForState(server, 'keeps-running', 'running', 20_000, 5)).pid;
  });
  after(() => server.close());

  async function corsFor(origin: string): Promise<string | null> {
    const answer = await fetch(`${server.url}/ping`, { headers: { origin } });
    await answer.arrayBuffer();
    return answer.headers.get('access-control-allow-origin');
  }

  it('applies CORS origins and the RTMP token; the encoder keeps its pid', async () => {
    assert.equal(await corsFor('https://other.example'), '*');
    const rtmpPort = server.app.ingest.rtmp?.ports()[0] ?? 0;
    await ok(server, 'PUT', '/config', {
      version: 3,
      storage: { cors: { origins: ['https://studio.example'] } },
      rtmp: { token: 'new-token' },
    });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');

    assert.equal(await corsFor('https://other.example'), null);
    assert.equal(await corsFor('https://studio.example'), 'https://studio.example');
    const oldToken = await RtmpTestClient.open(rtmpPort);
    assert.equal(await oldToken.publish('live', 'a?token=old-token'), 'NetStream.Publish.BadName');
    oldToken.close();
    const newToken = await RtmpTestClient.open(rtmpPort);
    assert.equal(await newToken.publish('live', 'a?token=new-token'), 'NetStream.Publish.Start');
    newToken.close();
    const state = await waitForState(server, 'keeps-running', 'running');
    assert.equal(state.pid, pid);
    assert.ok(isAlive(pid));
  });

  it('applies the sessions settings and the filesystem limits', async () => {
    const { username, password: oldPassword } = structuredClone(server.config.storage.memory.auth);
    let password = oldPassword;
    const memfsPut = (path: string, body: Buffer | string): Promise<Response> =>
      fetch(`${server.url}/memfs${path}`, {
        method: 'PUT',
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
        body,
      });
    const playlist = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nview0.ts\n';
    assert.equal((await memfsPut('/view0.ts', Buffer.alloc(1000, 1))).status, 201);
    assert.equal((await memfsPut('/view.m3u8', playlist)).status, 201);
    // A counted viewer (127.0.0.2 is not ignored by default) gets a master playlist naming its session.
    const viewed = async (): Promise<string> =>
      (await rawRequest(server.url, '/memfs/view.m3u8', { localAddress: '127.0.0.2' })).body.toString();
    assert.match(await viewed(), /#EXT-X-STREAM-INF/);
    await ok(server, 'PUT', '/config', {
      version: 3,
      sessions: { ip_ignorelist: ['127.0.0.0/8'], max_sessions: 7, persist: true, persist_interval_sec: 1 },
      storage: { memory: { max_size_mbytes: 1, auth: { password: 'new-memfs-password' } } },
    });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    // The publishers' memfs password is the new one.
    assert.equal((await memfsPut('/after.txt', 'x')).status, 401);
    password = 'new-memfs-password';
    assert.equal((await memfsPut('/after.txt', 'x')).status, 201);
    // 127.0.0.2 is ignored now: it gets the playlist as stored, no session.
    assert.equal(await viewed(), playlist);
    const summary = (await (await fetch(`${server.url}/api/v3/session?collectors=hls`)).json()) as {
      hls: { active: { max_sessions: number } };
    };
    assert.equal(summary.hls.active.max_sessions, 7);
    // The session history is saved every second now.
    await waitFor(
      async () =>
        (await stat(join(server.config.db.dir, 'sessions', 'hls.json')).catch(() => undefined)) !==
          undefined || undefined,
      10_000,
      'the session history on disk',
    );
    // memfs holds 1 MiB now.
    const big = await memfsPut('/big.bin', Buffer.alloc(2 * 1024 * 1024, 1));
    assert.ok(big.status === 413 || big.status === 507, String(big.status));
    assert.equal((await waitForState(server, 'keeps-running', 'running')).pid, pid);
  });

  it('applies log.level to the log at once', async () => {
    const reloadLines = async (): Promise<number> =>
      (await ok<string[]>(server, 'GET', '/log')).filter((line) => line.includes('configuration reloaded'))
        .length;
    await ok(server, 'PUT', '/config', { version: 3, log: { level: 'warn' } });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    const atWarn = await reloadLines();
    // An info line of the next reload is left out now.
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal(await reloadLines(), atWarn);
    await ok(server, 'PUT', '/config', { version: 3, log: { level: 'info' } });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal(await reloadLines(), atWarn + 1);
  });

  it('applies the process log sizes to the reports of the processes that exist', async () => {
    // Fails at once and again every second: each run is archived into the report's history.
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('flaps', {
        input: [{ id: 'in', address: 'nosuchfilter', options: ['-f', 'lavfi'] }],
        reconnect: true,
        reconnect_delay_seconds: 1,
        autostart: true,
      }),
    );
    const history = async (): Promise<number> => (await getReport(server, 'flaps')).history.length;
    await waitFor(async () => ((await history()) >= 3 ? true : undefined), 20_000, 'three earlier runs');
    await ok(server, 'PUT', '/config', { version: 3, ffmpeg: { log: { max_history: 1 } } });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    await waitFor(async () => ((await history()) <= 1 ? true : undefined), 10_000, 'one earlier run kept');
    await ok(server, 'DELETE', '/process/flaps');
  });

  it('rebuilds the router from the file; a reload it cannot apply changes nothing and says why', async () => {
    const ui = join(server.dir, 'ui-build');
    await mkdir(ui);
    await writeFile(join(ui, 'index.html'), 'reloaded ui');
    const file = join(server.dir, 'config.json');
    const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...json, router: { ui_path: ui } }));
    assert.equal((await fetch(`${server.url}/ui/`)).status, 404);
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal(await (await fetch(`${server.url}/ui/`)).text(), 'reloaded ui');

    await writeFile(
      file,
      JSON.stringify({
        ...json,
        router: { ui_path: join(server.dir, 'missing') },
        storage: { cors: { origins: ['*'] } },
      }),
    );
    const refused = await call<{ message: string; details: string[] }>(server, 'GET', '/config/reload');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, 'Config not applied');
    assert.match(refused.body.details.join('\n'), /^router\.ui_path: ".*missing" cannot be read \(ENOENT\)/);
    // Neither the router nor the CORS origins of that file took effect.
    assert.equal(await (await fetch(`${server.url}/ui/`)).text(), 'reloaded ui');
    assert.equal(await corsFor('https://other.example'), null);
    assert.equal((await waitForState(server, 'keeps-running', 'running')).pid, pid);
  });

  it('moves the RTMP listener (a stream published before keeps running) and starts SRT', async () => {
    const rtmp = server.app.ingest.rtmp;
    const oldPort = rtmp?.ports()[0] ?? 0;
    const publisher = await RtmpTestClient.open(oldPort);
    assert.equal(await publisher.publish('live', 'kept?token=new-token'), 'NetStream.Publish.Start');
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('pulls', { input: [{ id: 'in', address: '{rtmp,name=kept}', options: ['-f', 'flv'] }] }),
    );
    const rtmpPort = await freePort();
    const srtPort = await freePort();
    await ok(server, 'PUT', '/config', {
      version: 3,
      rtmp: { address: `127.0.0.1:${rtmpPort}` },
      srt: { enable: true, address: `127.0.0.1:${srtPort}` },
    });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal(server.app.ingest.rtmp, rtmp, 'the same RTMP server, its streams kept');
    assert.deepEqual(rtmp?.ports(), [rtmpPort]);
    assert.ok(rtmp?.channels().includes('/live/kept'));
    const moved = await RtmpTestClient.open(rtmpPort);
    assert.equal(await moved.publish('live', 'b?token=new-token'), 'NetStream.Publish.Start');
    moved.close();
    await assert.rejects(RtmpTestClient.open(oldPort));
    publisher.close();
    // A process defined before runs against the new address next time; its token stays masked.
    const { command } = await ok<{ command: string[] }>(server, 'GET', '/process/pulls/state');
    const input = command.find((arg) => arg.startsWith('rtmp://')) ?? '';
    assert.equal(input, `rtmp://127.0.0.1:${rtmpPort}/kept?token=***`);
    await ok(server, 'DELETE', '/process/pulls');
    assert.equal(server.app.ingest.srt?.port(), srtPort);
    // Turned off, RTMP stops listening; turned on again, a new server listens.
    await ok(server, 'PUT', '/config', { version: 3, rtmp: { enable: false } });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    const rtmpNow = (): RtmpServer | undefined => server.app.ingest.rtmp;
    assert.equal(rtmpNow(), undefined);
    await assert.rejects(RtmpTestClient.open(rtmpPort));
    await ok(server, 'PUT', '/config', { version: 3, rtmp: { enable: true } });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    const again = await RtmpTestClient.open(rtmpNow()?.ports()[0] ?? 0);
    assert.equal(await again.publish('live', 'c?token=new-token'), 'NetStream.Publish.Start');
    again.close();
    const srt = await ok<{ publisher: Record<string, unknown> }>(server, 'GET', '/srt');
    assert.deepEqual(srt.publisher, {});
    assert.equal((await waitForState(server, 'keeps-running', 'running')).pid, pid);
  });

  it('moves the HTTP listener; encoders keep writing to the old loopback address', async () => {
    const port = await freePort();
    await ok(server, 'PUT', '/config', { version: 3, address: `127.0.0.1:${port}` });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    const moved = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${moved}/ping`)).status, 200);
    // The encoder started before the move writes new segments through the old address.
    const playlist = async (): Promise<string> => (await fetch(`${moved}/memfs/keeps.m3u8`)).text();
    const before = await playlist();
    await waitFor(async () => ((await playlist()) !== before ? true : undefined), 15_000, 'a new segment');
    assert.equal((await waitForState(server, 'keeps-running', 'running')).pid, pid);
    assert.ok(isAlive(pid));
  });

  it('names changed cluster keys in the log as waiting for the next start, with why', async () => {
    const file = join(server.dir, 'config.json');
    const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    // The file as the test before left it names a router directory that is gone.
    delete json.router;
    await writeFile(file, JSON.stringify({ ...json, cluster: { lease_ttl_sec: 20 } }));
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    const lines = await ok<string[]>(server, 'GET', '/log');
    assert.ok(
      lines.some(
        (line) =>
          line.includes('take effect at the next start') &&
          line.includes('cluster.lease_ttl_sec (the node joins its cluster at start'),
      ),
      lines.filter((line) => line.includes('configuration reloaded')).join('\n'),
    );
    assert.equal(server.config.cluster.lease_ttl_sec, 8);
  });
});
