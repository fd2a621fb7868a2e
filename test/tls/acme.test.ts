// test-alone: runs pebble and pebble-challtestsrv (twice) on ports of their own, and ffmpeg over RTMPS.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setPath } from '../../src/config/index.js';
import type { ConfigAnswer } from '../../src/config-api/index.js';
import type { TlsStatusView } from '../../src/tls/index.js';
import { uiSettingsSave } from '../config-api/ui-settings.js';
import { freePort } from '../helpers/free-port.js';
import { selfSigned, startPebble, type Pebble } from '../helpers/pebble.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ffmpeg } from '../ingest/rtmp-support.js';
import { ok, waitFor, waitForState } from '../process/support.js';
import { capturingLogger, openVerified } from './support.js';
import { uiAddresses } from './ui-addresses.js';

type Answer = ConfigAnswer & { tls: TlsStatusView };
const NAME = 'www.streamcore.test';

/** The same address on loopback: challtestsrv resolves every test name to 127.0.0.1. */
const onLoopback = (url: string): string => {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  return parsed.toString().replace(/\/$/, '');
};

describe('tls.auto: certificates from a real ACME server (pebble)', () => {
  let pebble: Pebble;
  let server: TestServer;
  let root: string;
  let rootFile: string;
  /** The server's directory, kept over a restart. */
  let dir: string;
  const { logger, lines } = capturingLogger();

  before(async () => {
    const port = await freePort();
    pebble = await startPebble(port);
    root = await pebble.root();
    const own = selfSigned(tmpdir(), `streamcore-rtmps-${port}`, 'DNS:localhost');
    dir = await mkdtemp(join(tmpdir(), 'streamcore-acme-'));
    server = await startServer({
      dir,
      logger,
      // HSTS only for a chain to these roots: pebble's stands in for the public ones here.
      tls: { publicRoots: [root] },
      // Addresses as the UI writes them, `:port` (with auth off they bind loopback).
      config: {
        address: `:${port}`,
        host: { name: [] },
        rtmp: {
          enable: true,
          enable_tls: true,
          address: `:${await freePort()}`,
          address_tls: `:${await freePort()}`,
        },
        tls: {
          enable: false,
          auto: false,
          address: `:${await freePort()}`,
          // RTMPS on own files until the UI turns tls.auto on.
          cert_file: own.cert,
          key_file: own.key,
          acme: { directory_url: pebble.directoryUrl, ca_file: pebble.apiCaFile },
        },
      },
    });
    rootFile = join(server.dir, 'pebble-root.pem');
    await writeFile(rootFile, root);
  });
  after(async () => {
    await server?.close();
    await pebble?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** Where HTTPS listens now (each reload that rebuilds it may move it). */
  function httpsUrl(): string {
    const url = server.app.tls.url;
    assert.ok(url !== undefined, 'HTTPS is listening');
    return url;
  }

  /** Stores host.name over the API and reloads, as the UI's Save and Restart do. */
  async function useNames(names: string[]): Promise<void> {
    const answer = await ok<Answer>(server, 'GET', '/config');
    await ok(
      server,
      'PUT',
      '/config',
      uiSettingsSave(answer, (form) => setPath(form, 'host.name', names.join(', '))),
    );
    await ok(server, 'GET', '/config/reload');
  }

  async function serving(): Promise<TlsStatusView> {
    return waitFor(
      async () => {
        const answer = await ok<Answer>(server, 'GET', '/config');
        return answer.tls.state === 'serving' && answer.tls.source === 'acme' ? answer.tls : undefined;
      },
      60_000,
      'the certificate',
    );
  }

  /** Waits for the status to name a failure matching `reason`, and for the log line that says it. */
  async function expectFailure(reason: RegExp, name: string | null): Promise<TlsStatusView> {
    const status = await waitFor(
      async () => {
        // Over plain HTTP: it keeps serving whatever HTTPS does.
        const answer = await ok<Answer>(server, 'GET', '/config');
        return answer.tls.error !== null && reason.test(answer.tls.error.reason) ? answer.tls : undefined;
      },
      30_000,
      `a TLS failure matching ${reason}`,
    );
    assert.equal(status.error?.name, name);
    const logged = lines.find((line) => line.level === 50 && reason.test(String(line.msg)));
    assert.ok(logged, `a log line matching ${reason}`);
    if (name !== null) assert.match(String(logged.msg), new RegExp(name.replaceAll('.', '\\.')));
    return status;
  }

  it("turns HTTPS on from the UI's Settings (Save, Restart), and the addresses the UI then shows work", async () => {
    const shown = await ok<Answer>(server, 'GET', '/config');
    // RTMPS only, on its own files; no HTTPS yet.
    assert.equal(shown.tls.source, 'file');
    assert.equal(server.app.tls.url, undefined);
    const body = uiSettingsSave(shown, (form) => {
      setPath(form, 'host.name', NAME);
      setPath(form, 'tls.auto', true);
      setPath(form, 'tls.email', 'ops@streamcore.test');
    });
    assert.deepEqual((body as { tls: unknown }).tls, {
      ...(shown.config.tls as object),
      enable: true,
      auto: true,
      email: 'ops@streamcore.test',
    });
    await ok(server, 'PUT', '/config', body);
    await ok(server, 'GET', '/config/reload');
    const status = await serving();
    assert.deepEqual(status.names, [NAME]);
    assert.equal(status.error, null);

    // The UI now reached over HTTPS: it reads the config there and builds its addresses from it.
    const https = await openVerified(httpsUrl(), root, NAME);
    // Renewed at two thirds of the served certificate's lifetime.
    const [from, to] = [Date.parse(https.peer.valid_from), Date.parse(https.peer.valid_to)];
    assert.equal(status.renew_at, new Date(from + ((to - from) * 2) / 3).toISOString());
    assert.equal(status.not_after, new Date(to).toISOString());
    const answer = await https.get('/api/v3/config', 'localhost');
    https.socket.destroy();
    const seen = (JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Answer).config as Parameters<
      typeof uiAddresses
    >[1];
    const ui = uiAddresses(httpsUrl(), seen);
    const tlsPort = new URL(httpsUrl()).port;
    assert.equal(ui.http, `https://${NAME}:${tlsPort}`);
    const rtmpsPort = server.app.ingest.rtmp?.ports()[1];
    assert.equal(ui.rtmp('channel'), `rtmps://${NAME}:${rtmpsPort}/channel.stream`);

    // RTMPS at the UI's address, verified against the CA's root for the name (same certificate).
    const verify = ['-tls_verify', '1', '-ca_file', rootFile, '-verifyhost', NAME];
    const rtmps = onLoopback(ui.rtmp('channel'));
    const publisher = ffmpeg([
      ...['-re', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=25', '-t', '4', '-c:v', 'libx264', '-g', '25'],
      ...[...verify, '-f', 'flv', rtmps],
    ]);
    await waitFor(
      () => Promise.resolve(server.app.ingest.rtmp?.channels().includes('/channel.stream')),
      10_000,
      'the RTMPS publisher',
    );
    const player = await ffmpeg([...verify, '-i', rtmps, '-t', '1', '-f', 'null', '-']).done;
    assert.equal(player.code, 0, player.stderr);
    assert.equal((await publisher.done).code, 0);
    // Checked, not waved through: a name the certificate does not carry is refused.
    const wrong = await ffmpeg([
      '-tls_verify',
      '1',
      '-ca_file',
      rootFile,
      '-verifyhost',
      'other.test',
      '-i',
      rtmps,
      '-t',
      '1',
      '-f',
      'null',
      '-',
    ]).done;
    assert.notEqual(wrong.code, 0);

    // HLS at the UI's address, written by an encoder through the plain loopback listener.
    await ok(server, 'POST', '/process', {
      id: 'ui-hls',
      input: [{ id: 'in', address: 'testsrc=size=64x48:rate=25', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'out',
          address: '{memfs}/ui-hls.m3u8',
          options: ['-c:v', 'libx264', '-g', '25', '-f', 'hls', '-hls_time', '1'],
        },
      ],
      autostart: true,
    });
    try {
      await waitForState(server, 'ui-hls', 'running');
      const hls = new URL(ui.hls('ui-hls'));
      const player = await openVerified(onLoopback(hls.origin), root, NAME);
      await waitFor(
        async () => /^HTTP\/1\.1 200 [\s\S]*#EXTINF/.test(await player.get(hls.pathname)),
        20_000,
        'the playlist at the UI address',
      );
      player.socket.destroy();
    } finally {
      await ok(server, 'DELETE', '/process/ui-hls');
    }
  });

  it('serves the whole API on HTTPS, with HSTS for a trusted chain, and keeps the account and certificate private', async () => {
    const https = await openVerified(httpsUrl(), root, NAME);
    for (const path of ['/api/v3/config', '/dashboard/', '/api/swagger/', '/ping']) {
      // With auth off (the test server's) the API answers local names only.
      const answer = await https.get(path, path.startsWith('/api') ? 'localhost' : undefined);
      assert.match(answer, /^HTTP\/1\.1 200 /, `${path}: ${answer.slice(0, 200)}`);
      assert.match(answer, /strict-transport-security: max-age=31536000/i, path);
    }
    https.socket.destroy();
    // HSTS only over HTTPS.
    const plain = await fetch(`${server.url}/ping`);
    assert.equal(plain.headers.get('strict-transport-security'), null);
    // Account and certificate under <db.dir>/cert, readable by the server only.
    const dir = join(server.config.db.dir, 'cert');
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    for (const file of ['account.key', 'accounts.json', 'certificate.pem', 'certificate.key']) {
      assert.equal((await stat(join(dir, file))).mode & 0o777, 0o600, file);
    }
    assert.match(await readFile(join(dir, 'certificate.pem'), 'utf8'), /BEGIN CERTIFICATE/);
    // ... and out of an encoder's reach.
    const refused = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'steal-key',
        input: [{ id: 'in', address: join(dir, 'certificate.key'), options: [] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      }),
    });
    assert.equal(refused.status, 400, await refused.text());
  });

  it('swaps a renewed certificate in while a client holds its connection', async () => {
    const url = httpsUrl();
    const held = await openVerified(url, root, NAME);
    assert.match(await held.get('/ping'), /^HTTP\/1\.1 200 /);
    await server.app.tls.renewCertificate();
    const fresh = await openVerified(url, root, NAME);
    assert.notEqual(fresh.peer.serialNumber, held.peer.serialNumber, 'a new certificate for new connections');
    // The held connection goes on, with the certificate it shook hands with.
    assert.match(await held.get('/ping'), /^HTTP\/1\.1 200 /);
    held.socket.destroy();
    fresh.socket.destroy();
  });

  it('says that host.name is empty, and HTTP keeps serving', async () => {
    await useNames([]);
    await expectFailure(/host\.name is empty/, null);
  });

  it('says that an IP address gets no certificate', async () => {
    await useNames(['127.0.0.1']);
    await expectFailure(/host\.name holds an IP address/, '127.0.0.1');
  });

  it('says which name failed its challenge and why, and plans the next attempt', async () => {
    // Nothing listens there: the CA cannot reach the plain port for this name.
    await pebble.resolve('unreachable.streamcore.test', '127.0.0.2');
    await useNames(['unreachable.streamcore.test']);
    const status = await expectFailure(/connection|refused/i, 'unreachable.streamcore.test');
    const wait = (view: TlsStatusView): number =>
      Date.parse(view.next_attempt_at ?? '') - Date.parse(view.error?.at ?? '');
    assert.ok(Math.abs(wait(status) - 60_000) < 1000, `first retry after a minute: ${wait(status)} ms`);
    // Failing again, it waits longer (the CA counts failed validations per name and hour).
    await server.app.tls.renewCertificate();
    const again = (await ok<Answer>(server, 'GET', '/config')).tls;
    assert.ok(
      Math.abs(wait(again) - 5 * 60_000) < 1000,
      `second retry after five minutes: ${wait(again)} ms`,
    );
  });

  it('says that the CA refused, and HTTP keeps serving', async () => {
    // A CA that wants an external account binding refuses every account without one.
    const port = await freePort();
    const refusing = await startPebble(port, { eabRequired: true });
    const capture = capturingLogger();
    const other = await startServer({
      logger: capture.logger,
      config: {
        address: `127.0.0.1:${port}`,
        host: { name: ['refused.streamcore.test'] },
        tls: {
          enable: true,
          auto: true,
          address: '127.0.0.1:0',
          acme: { directory_url: refusing.directoryUrl, ca_file: refusing.apiCaFile },
        },
      },
    });
    try {
      const status = await waitFor(
        async () => (await ok<Answer>(other, 'GET', '/config')).tls.error ?? undefined,
        30_000,
        'the refusal',
      );
      assert.equal(status.name, 'refused.streamcore.test');
      assert.match(status.reason, /externalAccountRequired/);
      assert.ok(
        capture.lines.some((line) =>
          /refused\.streamcore\.test: .*externalAccountRequired/.test(String(line.msg)),
        ),
      );
    } finally {
      await other.close();
      await refusing.stop();
    }
  });

  it('serves the stored certificate after a restart, without asking the CA', async () => {
    await server.close();
    await pebble.stop();
    // The CA's roots went with it: nothing may need them.
    server = await startServer({
      dir,
      logger,
      tls: { publicRoots: [root] },
      config: { host: { name: [NAME] }, tls: { acme: { ca_file: '' } } },
    });
    const status = (await ok<Answer>(server, 'GET', '/config')).tls;
    assert.equal(status.state, 'serving');
    assert.deepEqual(status.names, [NAME]);
    const https = await openVerified(httpsUrl(), root, NAME);
    assert.match(await https.get('/ping'), /^HTTP\/1\.1 200 /);
    https.socket.destroy();
  });
});
