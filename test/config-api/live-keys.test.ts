import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../storage/raw-request.js';
import { selfSigned } from '../helpers/pebble.js';
import { RawConnection } from '../helpers/raw-connection.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { isAlive, lavfiProcess, waitFor } from '../process/support.js';

const ADMIN = { username: 'admin', password: 'live-keys-password-1' };
const PUBLISHER = { username: 'publisher', password: 'live-keys-memfs-1' };

/**
 * The three keys of the Restreamer UI's Settings that used to wait for the next start
 * (`storage.memory.auth.enable`, `sessions.enable`, `api.auth.enable`), turned on and off by the
 * UI's Save + Restart (PUT /api/v3/config, GET /api/v3/config/reload) against a real server with a
 * real encoder writing HLS into memfs: each takes effect at once, and the encoder keeps its pid.
 */
describe('reload: the keys the UI switches take effect at once; the encoder keeps running', () => {
  let server: TestServer;
  let pid: number;
  let certDir: string;
  /** An access token while authentication is on. */
  let token: string | undefined;

  const api = async <T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    bearer = token,
  ): Promise<{ status: number; body: T }> => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    const answer = await fetch(`${server.url}/api/v3${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    return { status: answer.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  };
  /** The UI's Save + Restart. */
  const saveAndRestart = async (change: Record<string, unknown>): Promise<void> => {
    const saved = await api('PUT', '/config', { version: 3, ...change });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const reloaded = await api('GET', '/config/reload');
    assert.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
  };
  const encoderPid = async (): Promise<number> => {
    const state = await api<{ exec: string; pid: number }>('GET', '/process/writes-hls/state');
    assert.equal(state.body.exec, 'running');
    return state.body.pid;
  };
  const playlist = async (): Promise<string> => (await fetch(`${server.url}/memfs/keys.m3u8`)).text();
  /** Resolves once the encoder wrote its playlist anew (a new segment) twice. */
  const encoderKeepsWriting = async (): Promise<void> => {
    for (let round = 0; round < 2; round += 1) {
      const before = await playlist();
      await waitFor(async () => (await playlist()) !== before, 20_000, 'the encoder to write a new segment');
    }
    assert.equal(await encoderPid(), pid);
    assert.ok(isAlive(pid));
  };

  before(async () => {
    certDir = await mkdtemp(join(tmpdir(), 'streamcore-live-keys-'));
    const certificate = selfSigned(certDir, 'own', 'DNS:localhost,IP:127.0.0.1');
    server = await startServer({
      config: {
        // No host: the listeners bind every interface while authentication is on, loopback while off.
        address: ':0',
        tls: { enable: true, address: ':0', cert_file: certificate.cert, key_file: certificate.key },
        api: { auth: { enable: false, ...ADMIN } },
        storage: { memory: { auth: { enable: false, ...PUBLISHER } } },
        sessions: { enable: false },
      },
    });
    const created = await api(
      'POST',
      '/process',
      lavfiProcess('writes-hls', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/keys.m3u8',
            options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'hls', '-hls_time', '1'],
          },
        ],
        autostart: true,
      }),
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await waitFor(
      async () => (await fetch(`${server.url}/memfs/keys.m3u8`)).ok,
      20_000,
      'the first playlist',
    );
    pid = await encoderPid();
  });
  after(async () => {
    await server.close();
    await rm(certDir, { recursive: true, force: true });
  });

  const memfsPut = (path: string, credentials?: { username: string; password: string }): Promise<Response> =>
    fetch(`${server.url}/memfs${path}`, {
      method: 'PUT',
      headers:
        credentials === undefined
          ? {}
          : {
              authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`,
            },
      body: 'x',
    });

  it('storage.memory.auth.enable: anonymous writes are refused at once, the running encoder keeps writing', async () => {
    assert.equal((await memfsPut('/anonymous.txt')).status, 201);
    // A started process whose memfs name no credential could cover holds the switch back, whole.
    const unscoped = lavfiProcess('unscoped', {
      output: [{ id: 'out', address: '{memfs}/%03d.ts', options: ['-f', 'null'] }],
      autostart: true,
    });
    assert.equal((await api('POST', '/process', unscoped)).status, 200);
    assert.equal(
      (await api('PUT', '/config', { version: 3, storage: { memory: { auth: { enable: true } } } })).status,
      200,
    );
    const refused = await api<{ message: string; details: string[] }>('GET', '/config/reload');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, 'Config not applied');
    assert.match(
      refused.body.details.join('\n'),
      /^storage\.memory\.auth\.enable: process "unscoped" output\[0\]\.address: memfs path "\/%03d\.ts" has no fixed start/,
    );
    assert.equal((await memfsPut('/anonymous.txt')).status, 204);
    assert.equal((await api('DELETE', '/process/unscoped')).status, 200);

    assert.equal((await api('GET', '/config/reload')).status, 200);
    assert.equal((await memfsPut('/anonymous.txt')).status, 401);
    assert.equal((await memfsPut('/publisher.txt', PUBLISHER)).status, 201);
    // Its run's own credential, issued at its start while writes needed none, is asked for now.
    await encoderKeepsWriting();
  });

  it('sessions.enable: viewers are counted from the reload on, and no longer once it is off', async () => {
    // 127.0.0.2 is not on the default ignore list.
    const view = async (): Promise<string> =>
      (await rawRequest(server.url, '/memfs/keys.m3u8', { localAddress: '127.0.0.2' })).body.toString();
    const counted = async (): Promise<number> => {
      const { body } = await api<{ http: { summary: { remote: Record<string, { sessions: number }> } } }>(
        'GET',
        '/session?collectors=http',
      );
      return body.http.summary.remote['127.0.0.2']?.sessions ?? 0;
    };
    assert.doesNotMatch(await view(), /#EXT-X-STREAM-INF/);
    assert.equal(await counted(), 0);

    await saveAndRestart({ sessions: { enable: true } });
    // An HLS viewer gets the master playlist that names its session, and each request is counted.
    assert.match(await view(), /#EXT-X-STREAM-INF/);
    await view();
    const whileOn = await waitFor(
      async () => ((await counted()) >= 2 ? counted() : undefined),
      10_000,
      'two counted',
    );

    await saveAndRestart({ sessions: { enable: false } });
    assert.doesNotMatch(await view(), /#EXT-X-STREAM-INF/);
    await view();
    // Three more round trips later the requests above would have been counted long since.
    assert.equal(await counted(), whileOn);
    await encoderKeepsWriting();
  });

  it('api.auth.enable on: the API needs a login right after the reload', async () => {
    assert.equal((await api('GET', '/process', undefined, undefined)).status, 200);
    await saveAndRestart({ api: { auth: { enable: true } } });
    assert.equal((await api('GET', '/process', undefined, undefined)).status, 401);
    const identity = (await (await fetch(`${server.url}/api`)).json()) as { auths: string[] };
    assert.deepEqual(identity.auths, ['localjwt']);
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    assert.equal(login.status, 200);
    token = ((await login.json()) as { access_token: string }).access_token;
    assert.equal((await api('GET', '/process')).status, 200);
    // Protected now, `:0` listens on every interface, on the port it had.
    const bound = server.app.server.server.address() as AddressInfo;
    assert.equal(bound.address, '0.0.0.0');
    assert.equal(String(bound.port), new URL(server.url).port);
    await encoderKeepsWriting();
  });

  it('api.auth.enable off: open to this machine only, also on connections from the network accepted before', async (t) => {
    const peer = networkAddress();
    const port = Number(new URL(server.url).port);
    const httpsPort = (): number => Number(new URL(server.app.tls.url ?? '').port);
    const tlsPortBefore = httpsPort();
    const held: RawConnection[] = [];
    if (peer === undefined) t.diagnostic('no IPv4 address beyond loopback: the network clients are left out');
    else {
      held.push(
        await RawConnection.open({ host: peer, port, localAddress: peer }),
        await RawConnection.open({ host: peer, port: tlsPortBefore, localAddress: peer, tls: true }),
      );
      for (const connection of held) {
        assert.equal(
          (await connection.request('GET /api/v3/process HTTP/1.1\r\nHost: localhost\r\n\r\n')).status,
          401,
        );
        // A request begun before the reload (its head not complete yet) keeps its connection open.
        connection.write('GET /api/v3/process HTTP/1.1\r\nHost: localhost\r\n');
      }
    }
    await saveAndRestart({ api: { auth: { enable: false } } });
    token = undefined;
    assert.equal((await api('GET', '/process')).status, 200);
    const bound = server.app.server.server.address() as AddressInfo;
    assert.equal(bound.address, '127.0.0.1');
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    assert.equal(login.status, 404);
    if (peer !== undefined) {
      await assert.rejects(RawConnection.open({ host: peer, port, localAddress: peer }), /ECONNREFUSED/);
      await assert.rejects(
        RawConnection.open({ host: peer, port: httpsPort(), localAddress: peer, tls: true }),
        /ECONNREFUSED/,
      );
      for (const connection of held) {
        // Naming a loopback host, on a connection a start with these settings would never accept.
        connection.write('\r\n');
        const sneaked = await connection.answer();
        assert.equal(sneaked.status, 403, sneaked.body);
        assert.match(sneaked.body, /is not on this machine/);
        connection.close();
      }
    }
    await encoderKeepsWriting();
  });
});

/** The first IPv4 address of this machine beyond loopback, if it has one. */
function networkAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
}
