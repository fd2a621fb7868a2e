// test-alone: runs pebble and pebble-challtestsrv on ports of their own, and waits on their validations.
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ConfigAnswer } from '../../src/config-api/index.js';
import type { TlsStatusView } from '../../src/tls/index.js';
import { freePort, startPebble, type Pebble } from '../helpers/pebble.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ffmpeg } from '../ingest/rtmp-support.js';
import { ok, waitFor } from '../process/support.js';
import { capturingLogger, openVerified } from './support.js';

type Answer = ConfigAnswer & { tls: TlsStatusView };

describe('tls.auto: certificates from a real ACME server (pebble)', () => {
  let pebble: Pebble;
  let server: TestServer;
  let root: string;
  const { logger, lines } = capturingLogger();

  before(async () => {
    const port = await freePort();
    pebble = await startPebble(port);
    root = await pebble.root();
    server = await startServer({
      logger,
      // HSTS only for a chain to these roots: pebble's stands in for the public ones here.
      tls: { publicRoots: [root] },
      config: {
        address: `127.0.0.1:${port}`,
        host: { name: [] },
        rtmp: { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: '127.0.0.1:0' },
        tls: {
          enable: true,
          auto: true,
          email: 'ops@streamcore.test',
          address: '127.0.0.1:0',
          acme: { directory_url: pebble.directoryUrl, ca_file: pebble.apiCaFile },
        },
      },
    });
  });
  after(async () => {
    await server?.close();
    await pebble?.stop();
  });

  /** Stores host.name over the API and reloads, as the UI's Save and Restart do. */
  async function useNames(names: string[]): Promise<void> {
    const shown = await ok<Answer>(server, 'GET', '/config');
    await ok(server, 'PUT', '/config', {
      ...shown.config,
      host: { ...(shown.config.host as object), name: names },
    });
    await ok(server, 'GET', '/config/reload');
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

  it('says that host.name is empty, and HTTP keeps serving', async () => {
    const status = await expectFailure(/host\.name is empty/, null);
    assert.equal(status.state, 'pending');
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
    assert.ok(status.next_attempt_at !== null && Date.parse(status.next_attempt_at) > Date.now());
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

  it('obtains a certificate over HTTP-01 and serves the whole API on HTTPS with it', async () => {
    await useNames(['www.streamcore.test']);
    const status = await waitFor(
      async () => {
        const answer = await ok<Answer>(server, 'GET', '/config');
        return answer.tls.state === 'serving' ? answer.tls : undefined;
      },
      60_000,
      'the certificate',
    );
    assert.deepEqual(status.names, ['www.streamcore.test']);
    assert.equal(status.source, 'acme');
    assert.equal(status.error, null);
    const url = server.app.tls.url;
    assert.ok(url !== undefined);
    const https = await openVerified(url, root, 'www.streamcore.test');
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
  });

  it('serves RTMPS with the same certificate, to an ffmpeg that verifies it', async () => {
    const rootFile = join(server.dir, 'pebble-root.pem');
    await writeFile(rootFile, root);
    const tlsPort = server.app.ingest.rtmp?.ports()[1];
    const url = `rtmps://127.0.0.1:${tlsPort}/live/verified`;
    const verify = ['-tls_verify', '1', '-ca_file', rootFile, '-verifyhost', 'www.streamcore.test'];
    const publisher = ffmpeg([
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=64x48:rate=25',
      '-t',
      '4',
      '-c:v',
      'libx264',
      '-g',
      '25',
      ...verify,
      '-f',
      'flv',
      url,
    ]);
    await waitFor(
      () => Promise.resolve(server.app.ingest.rtmp?.channels().includes('/live/verified')),
      10_000,
      'the RTMPS publisher',
    );
    const player = await ffmpeg([...verify, '-i', url, '-t', '1', '-f', 'null', '-']).done;
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
      url,
      '-t',
      '1',
      '-f',
      'null',
      '-',
    ]).done;
    assert.notEqual(wrong.code, 0);
  });

  it('swaps a renewed certificate in while a client holds its connection', async () => {
    const url = server.app.tls.url as string;
    const held = await openVerified(url, root, 'www.streamcore.test');
    assert.match(await held.get('/ping'), /^HTTP\/1\.1 200 /);
    await server.app.tls.renewCertificate();
    const fresh = await openVerified(url, root, 'www.streamcore.test');
    assert.notEqual(fresh.peer.serialNumber, held.peer.serialNumber, 'a new certificate for new connections');
    // The held connection goes on, with the certificate it shook hands with.
    assert.match(await held.get('/ping'), /^HTTP\/1\.1 200 /);
    held.socket.destroy();
    fresh.socket.destroy();
  });
});
