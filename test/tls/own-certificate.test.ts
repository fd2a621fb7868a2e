import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { createHash, createPublicKey } from 'node:crypto';
import type { ConfigAnswer } from '../../src/config-api/index.js';
import type { TlsStatusView } from '../../src/tls/index.js';
import { launchBrowser } from '../dashboard/browser.js';
import { selfSigned } from '../helpers/pebble.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok, waitFor, waitForState } from '../process/support.js';
import { openVerified } from './support.js';

type Answer = ConfigAnswer & { tls: TlsStatusView };

/** Whether a handshake with these client settings succeeds. */
function handshake(
  url: string,
  options: { maxVersion?: 'TLSv1.1' | 'TLSv1.2'; ciphers?: string },
): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), rejectUnauthorized: false, ...options });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('HTTPS with own certificate files', () => {
  let dir: string;
  let server: TestServer;
  let first: { cert: string; key: string };
  let second: { cert: string; key: string };
  const certFile = (): string => join(dir, 'served.pem');
  const keyFile = (): string => join(dir, 'served.key');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-own-cert-'));
    first = selfSigned(dir, 'first', 'DNS:localhost,IP:127.0.0.1');
    second = selfSigned(dir, 'second', 'DNS:localhost,IP:127.0.0.1');
    await copyFile(first.cert, certFile());
    await copyFile(first.key, keyFile());
    server = await startServer({
      tls: { certificatePollMs: 50 },
      config: { tls: { enable: true, address: '127.0.0.1:0', cert_file: certFile(), key_file: keyFile() } },
    });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses to start with files it cannot use, naming the keys', async () => {
    await writeFile(join(dir, 'bad.pem'), 'not a certificate');
    await assert.rejects(
      startServer({
        config: {
          tls: {
            enable: true,
            address: '127.0.0.1:0',
            cert_file: join(dir, 'bad.pem'),
            key_file: join(dir, 'bad.pem'),
          },
        },
      }),
      /^Error: tls\.cert_file, tls\.key_file: not a usable certificate and key/,
    );
    await assert.rejects(
      startServer({
        config: {
          tls: {
            enable: true,
            address: '127.0.0.1:0',
            cert_file: join(dir, 'none.pem'),
            key_file: keyFile(),
          },
        },
      }),
      /^Error: tls\.cert_file: cannot read/,
    );
  });

  it('serves the API on HTTPS, TLS 1.2 and 1.3 with AEAD ciphers only, and no HSTS for a self-signed certificate', async () => {
    const url = server.app.tls.url as string;
    const https = await openVerified(url, await readFile(first.cert), 'localhost');
    assert.equal(https.socket.alpnProtocol, 'http/1.1');
    const answer = await https.get('/api/v3/config');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(answer, /strict-transport-security/i);
    https.socket.destroy();
    assert.equal(await handshake(url, { maxVersion: 'TLSv1.2' }), true);
    assert.equal(await handshake(url, { maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' }), false);
    assert.equal(
      await handshake(url, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA256' }),
      false,
    );
    const status = (await ok<Answer>(server, 'GET', '/config')).tls;
    assert.equal(status.state, 'serving');
    assert.equal(status.source, 'file');
  });

  it('serves new files without a restart, and keeps the last good pair when new ones do not work', async () => {
    const url = server.app.tls.url as string;
    await copyFile(second.key, keyFile());
    await copyFile(second.cert, certFile());
    const secondCa = await readFile(second.cert);
    await waitFor(
      async () =>
        await openVerified(url, secondCa, 'localhost').then(
          (c) => (c.socket.destroy(), true),
          () => false,
        ),
      10_000,
      'the new certificate',
    );
    // A certificate that does not match the key: refused, the second pair stays.
    await copyFile(first.cert, certFile());
    const status = await waitFor(
      async () => (await ok<Answer>(server, 'GET', '/config')).tls.error ?? undefined,
      10_000,
      'the refusal',
    );
    assert.match(status.reason, /tls\.cert_file, tls\.key_file: not a usable certificate and key/);
    const still = await openVerified(url, secondCa, 'localhost');
    still.socket.destroy();
  });

  it('keeps encoders on the plain loopback listener: {memfs} HLS written by ffmpeg is served on HTTPS', async () => {
    await ok(server, 'POST', '/process', {
      id: 'tls-hls',
      input: [{ id: 'in', address: 'testsrc=size=64x48:rate=25', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'out',
          address: '{memfs}/tls-hls.m3u8',
          options: ['-c:v', 'libx264', '-g', '25', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3'],
        },
      ],
      options: ['-loglevel', 'info'],
      autostart: true,
    });
    try {
      await waitForState(server, 'tls-hls', 'running');
      const https = await openVerified(
        server.app.tls.url as string,
        await readFile(second.cert),
        'localhost',
      );
      const playlist = await waitFor(
        async () => {
          const answer = await https.get('/memfs/tls-hls.m3u8');
          return /^HTTP\/1\.1 200 [\s\S]*#EXTINF/.test(answer) ? answer : undefined;
        },
        20_000,
        'the playlist on HTTPS',
      );
      const segment = /\n(tls-hls\d+\.ts)/.exec(playlist)?.[1];
      assert.ok(segment !== undefined, playlist);
      assert.match(await https.get(`/memfs/${segment}`), /^HTTP\/1\.1 200 /);
      https.socket.destroy();
    } finally {
      await ok(server, 'DELETE', '/process/tls-hls');
    }
  });

  it('plays HLS over HTTPS in Chromium, from a player page on https', async () => {
    await ok(server, 'POST', '/process', {
      id: 'tls-player',
      input: [{ id: 'in', address: 'testsrc=size=320x240:rate=25', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'out',
          address: '{memfs}/tls-player.m3u8',
          options: [
            '-c:v',
            'libx264',
            '-pix_fmt',
            'yuv420p',
            '-g',
            '25',
            '-f',
            'hls',
            '-hls_time',
            '1',
            '-hls_list_size',
            '4',
            '-hls_segment_type',
            'fmp4',
            '-hls_fmp4_init_filename',
            'tls-player-init.mp4',
          ],
        },
      ],
      autostart: true,
    });
    const url = server.app.tls.url as string;
    // The page itself on https, from the server's disk filesystem: a small MSE player (as hls.js
    // plays in browsers) that follows the live playlist and appends its fMP4 segments.
    const page = `<!doctype html><video id="v" muted autoplay playsinline></video><script>
const base = ${JSON.stringify(url)} + '/memfs/';
const video = document.getElementById('v');
const source = new MediaSource();
video.src = URL.createObjectURL(source);
source.addEventListener('sourceopen', async () => {
  const buffer = source.addSourceBuffer('video/mp4; codecs="avc1.640015"');
  const append = (bytes) => new Promise((done) => { buffer.addEventListener('updateend', done, { once: true }); buffer.appendBuffer(bytes); });
  const get = async (name) => { const answer = await fetch(base + name); if (!answer.ok) throw new Error(name + ': ' + answer.status); return answer; };
  let playlist = 'tls-player.m3u8';
  const first = await (await get(playlist)).text();
  const variant = first.split('\\n').find((line) => line.startsWith('tls-player.m3u8?'));
  if (variant) playlist = variant;
  const seen = new Set();
  let initialized = false;
  for (;;) {
    const lines = (await (await get(playlist)).text()).split('\\n');
    if (!initialized) {
      const map = lines.find((line) => line.startsWith('#EXT-X-MAP:'));
      await append(await (await get(/URI="([^"]+)"/.exec(map)[1])).arrayBuffer());
      initialized = true;
    }
    for (const line of lines.filter((line) => line !== '' && !line.startsWith('#'))) {
      if (seen.has(line)) continue;
      seen.add(line);
      await append(await (await get(line)).arrayBuffer());
      if (video.paused) video.play().catch(() => undefined);
    }
    await new Promise((resume) => setTimeout(resume, 500));
  }
});
</script>`;
    const upload = await fetch(`${server.url}/api/v3/fs/disk/player.html`, { method: 'PUT', body: page });
    assert.ok(upload.status === 201 || upload.status === 204, String(upload.status));
    // Chromium trusts exactly this key (not every certificate).
    const spki = createHash('sha256')
      .update(createPublicKey(await readFile(keyFile())).export({ type: 'spki', format: 'der' }))
      .digest('base64');
    const browser = await launchBrowser([
      `--ignore-certificate-errors-spki-list=${spki}`,
      '--autoplay-policy=no-user-gesture-required',
    ]);
    try {
      await waitForState(server, 'tls-player', 'running');
      await waitFor(
        async () => (await fetch(`${server.url}/memfs/tls-player-init.mp4`)).status === 200,
        20_000,
        'the first segment',
      );
      const tab = await browser.newPage();
      const mixed: string[] = [];
      const problems: string[] = [];
      tab.on('pageerror', (error) => problems.push(error.message));
      tab.on('console', (message) => {
        problems.push(message.text());
        if (/mixed content/i.test(message.text())) mixed.push(message.text());
      });
      await tab.goto(`${url}/player.html`);
      const state = (): Promise<{ time: number; width: number; error: string }> =>
        tab.evaluate(
          "(({ currentTime, videoWidth, error }) => ({ time: currentTime, width: videoWidth, error: String(error?.message ?? '') }))(document.getElementById('v'))",
        );
      await waitFor(
        async () => {
          const now = await state();
          return now.time > 1.5 && now.width === 320 ? now : undefined;
        },
        30_000,
        'the video to play',
      ).catch(async (error: unknown) => {
        throw new Error(
          `${(error as Error).message}: ${JSON.stringify(await state())} ${problems.join('; ')}`,
        );
      });
      assert.equal(await tab.evaluate('location.protocol'), 'https:');
      assert.deepEqual(mixed, []);
    } finally {
      await browser.close();
      await ok(server, 'DELETE', '/process/tls-player');
    }
  });

  it('takes new files and RTMPS on reload, and a reload with files it cannot use changes nothing', async () => {
    const file = join(server.dir, 'config.json');
    const stored = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, unknown>>;
    const reloadWith = async (tls: Record<string, unknown>, rtmp: Record<string, unknown> = {}) => {
      await writeFile(
        file,
        JSON.stringify({ ...stored, tls: { ...stored.tls, ...tls }, rtmp: { ...stored.rtmp, ...rtmp } }),
      );
      return call<{ message: string; details: string[] }>(server, 'GET', '/config/reload');
    };
    const third = selfSigned(dir, 'third', 'DNS:localhost,IP:127.0.0.1');
    const url = server.app.tls.url as string;

    const refused = await reloadWith({ cert_file: third.cert, key_file: join(dir, 'none.key') });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, 'Config not applied');
    assert.match(refused.body.details.join('\n'), /^tls\.key_file: cannot read ".*none\.key"/);
    assert.equal(server.app.tls.url, url, 'HTTPS stays where it was');
    assert.equal(await handshake(url, {}), true);

    const rtmp = { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: '127.0.0.1:0' };
    const applied = await reloadWith({ cert_file: third.cert, key_file: third.key }, rtmp);
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    const thirdCa = await readFile(third.cert);
    const https = await openVerified(server.app.tls.url, thirdCa, 'localhost');
    https.socket.destroy();
    const rtmpsPort = server.app.ingest.rtmp?.ports()[1];
    assert.ok(rtmpsPort !== undefined, 'RTMPS listens after the reload');
    const rtmps = await openVerified(`rtmps://127.0.0.1:${rtmpsPort}`, thirdCa, 'localhost');
    rtmps.socket.destroy();
  });
});
