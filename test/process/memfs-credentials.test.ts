import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, runningCommandLine, waitFor, waitForState } from './support.js';

const PASSWORD = 'memfs-secret-4-issue-24';
const HUMAN = { username: 'admin', password: PASSWORD };
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5'];

interface Credentials {
  username: string;
  password: string;
}

function basic({ username, password }: Credentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** A PUT (or DELETE) of a memfs file with basic credentials; the status. */
async function memfs(server: TestServer, method: string, path: string, who: Credentials): Promise<number> {
  const response = await fetch(`${server.url}/memfs${path}`, {
    method,
    headers: { authorization: basic(who) },
    body: method === 'PUT' ? 'data' : undefined,
  });
  await response.arrayBuffer();
  return response.status;
}

/** The memfs credential in an encoder's command line (the user info of its `{memfs}` URLs). */
function credentialIn(args: string[], server: TestServer): Credentials {
  const host = server.url.slice('http://'.length);
  const found = args
    .map((arg) => new RegExp(`^http://([^:@/]+):([^@/]+)@${host}/memfs/`).exec(arg))
    .find((match) => match !== null);
  assert.ok(found, `a memfs URL with credentials in ${args.join(' ')}`);
  return {
    username: decodeURIComponent(found[1] as string),
    password: decodeURIComponent(found[2] as string),
  };
}

function assertNoPassword(text: string, where: string): void {
  for (const form of [PASSWORD, Buffer.from(`admin:${PASSWORD}`).toString('base64')])
    assert.ok(!text.includes(form), `${where} shows "${form}"`);
}

async function waitForFile(server: TestServer, path: string): Promise<void> {
  await waitFor(
    async () => (await fetch(`${server.url}/memfs${path}`)).status === 200,
    20_000,
    `memfs${path}`,
  );
}

describe('memfs credentials of encoders', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { enable: true, ...HUMAN } } } } });
  });
  after(() => server.close());

  it('refuses -report wherever it stands, and takes -loglevel with flags', async () => {
    const global = await call<{ code: number; details: string[] }>(
      server,
      'POST',
      '/process',
      lavfiProcess('reporting', { options: ['-report', '-loglevel', 'info'] }),
    );
    assert.equal(global.status, 400, global.text);
    assert.match(global.body.details.join('\n'), /options\[0\]: "-report" is not allowed: it writes a log/);
    const inOutput = await call<{ details: string[] }>(
      server,
      'POST',
      '/process',
      lavfiProcess('reporting', {
        output: [{ id: 'out', address: '-', options: ['-report', '-f', 'null'] }],
      }),
    );
    assert.equal(inOutput.status, 400, inOutput.text);
    assert.match(inOutput.body.details.join('\n'), /output\[0\]\.options\[0\]: "-report" is not allowed/);
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('flags', { options: ['-loglevel', 'repeat+level+info'] }),
    );
    await ok(server, 'DELETE', '/process/flags');
  });

  it('refuses a memfs name without a fixed start, which no credential could cover', async () => {
    const answer = await call<{ details: string[] }>(
      server,
      'POST',
      '/process',
      lavfiProcess('unnamed', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/unnamed.m3u8',
            options: ['-f', 'hls', '-hls_segment_filename', '{memfs}/%03d.ts'],
          },
        ],
      }),
    );
    assert.equal(answer.status, 400, answer.text);
    assert.match(
      answer.body.details.join('\n'),
      /output\[0\]\.options\[3\]: memfs path "\/%03d\.ts" has no fixed start/,
    );
  });

  it('gives the slaves of a tee muxer the credential too, escaped as {memfs^:} writes it', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('teed', {
        output: [
          {
            id: 'tee',
            address: '[f=mpegts:method=PUT]{memfs^:}/teed/stream.ts|[f=null]-',
            options: [...X264, '-map', '0:v', '-f', 'tee'],
          },
        ],
        autostart: true,
      }),
    );
    assertNoPassword((await runningCommandLine(server, 'teed')).join(' '), 'the encoder command line');
    await waitForState(server, 'teed', 'running', 20_000, 10);
    // One upload for the whole stream: it is stored when the encoder ends it.
    await ok(server, 'PUT', '/process/teed/command', { command: 'stop' });
    await waitForState(server, 'teed', 'finished', 20_000);
    await waitForFile(server, '/teed/stream.ts');
    await ok(server, 'DELETE', '/process/teed');
  });

  it('gives each run a credential of its own, for its own memfs paths while it runs', async () => {
    // HLS with variant streams: playlists and segments by %v, the master playlist beside them.
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('variants', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/variants/stream_%v.m3u8',
            options: [
              ...['-map', '0:v', '-map', '0:v', ...X264, '-f', 'hls', '-hls_time', '1', '-method', 'PUT'],
              ...['-var_stream_map', 'v:0 v:1', '-master_pl_name', 'master.m3u8'],
              ...['-hls_segment_filename', '{memfs}/variants/stream_%v_%03d.ts'],
            ],
          },
        ],
        autostart: true,
      }),
    );
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('single', {
        output: [
          { id: 'hls', address: '{memfs}/single.m3u8', options: [...X264, '-f', 'hls', '-hls_time', '1'] },
        ],
        // ffmpeg logs the headers of its requests, basic auth included.
        options: ['-loglevel', 'debug'],
        autostart: true,
      }),
    );
    for (const path of ['/variants/master.m3u8', '/variants/stream_1.m3u8', '/single.m3u8'])
      await waitForFile(server, path);

    const variantsArgs = await runningCommandLine(server, 'variants');
    assertNoPassword(variantsArgs.join(' '), 'the encoder command line');
    const variants = credentialIn(variantsArgs, server);
    const single = credentialIn(await runningCommandLine(server, 'single'), server);
    assert.notEqual(variants.password, single.password);

    // Its own paths: written and deleted; elsewhere: 403, also in another process's paths.
    assert.equal(await memfs(server, 'PUT', '/variants/stream_7_999.ts', variants), 201);
    assert.equal(await memfs(server, 'DELETE', '/variants/stream_7_999.ts', variants), 200);
    assert.equal(await memfs(server, 'PUT', '/variants/master.m3u8', variants), 204);
    assert.equal(await memfs(server, 'PUT', '/elsewhere.ts', variants), 403);
    assert.equal(await memfs(server, 'PUT', '/single999.ts', variants), 403);
    assert.equal(await memfs(server, 'DELETE', '/single.m3u8', variants), 403);
    assert.equal(await memfs(server, 'PUT', '/variants/stream_0_999.ts', single), 403);
    const refused = await fetch(`${server.url}/memfs/elsewhere.ts`, {
      method: 'PUT',
      headers: { authorization: basic(variants) },
      body: 'x',
    });
    const envelope = (await refused.json()) as { code: number; message: string; details: string };
    assert.equal(envelope.code, 403);
    assert.match(JSON.stringify(envelope), /only the memfs paths its outputs name/);
    // Publishers keep the configured password, anywhere.
    assert.equal(await memfs(server, 'PUT', '/publisher/live.m3u8', HUMAN), 201);

    // Masked like the password in what the API shows.
    const report = await waitFor(
      async () => {
        const text = (await call(server, 'GET', '/process/single/report')).text;
        return text.includes('Authorization:') ? text : undefined;
      },
      20_000,
      'an Authorization header line in the report',
    );
    const state = (await call(server, 'GET', '/process/single/state')).text;
    for (const text of [report, state]) {
      assert.ok(!text.includes(single.password), 'the run password is masked');
      assert.ok(!text.includes(basic(single).slice('Basic '.length)), 'its basic-auth header is masked');
    }

    // Stopped: the credential is dead; started again: a new one, the old one still dead.
    await ok(server, 'PUT', '/process/variants/command', { command: 'stop' });
    await waitForState(server, 'variants', 'finished', 20_000);
    assert.equal(await memfs(server, 'PUT', '/variants/stream_7_999.ts', variants), 401);
    await ok(server, 'PUT', '/process/variants/command', { command: 'start' });
    const restarted = credentialIn(await runningCommandLine(server, 'variants'), server);
    assert.notEqual(restarted.password, variants.password);
    assert.equal(await memfs(server, 'PUT', '/variants/stream_7_999.ts', variants), 401);
    assert.equal(await memfs(server, 'PUT', '/variants/stream_7_999.ts', restarted), 201);

    // Deleted: dead too.
    await ok(server, 'DELETE', '/process/variants');
    assert.equal(await memfs(server, 'PUT', '/variants/stream_7_999.ts', restarted), 401);
    await ok(server, 'DELETE', '/process/single');
    assert.equal(await memfs(server, 'PUT', '/single999.ts', single), 401);
  });
});

describe('FFREPORT in the server environment', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-ffreport-'));
    await mkdir(join(dir, 'config'));
    await writeFile(
      join(dir, 'config', 'config.json'),
      JSON.stringify({
        address: '127.0.0.1:0',
        api: { auth: { enable: false } },
        storage: { disk: { dir: join(dir, 'data') }, memory: { auth: { enable: true, ...HUMAN } } },
      }),
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('does not reach the encoders, which would log their command line into the disk directory', async () => {
    const main = startMain({ FFREPORT: 'level=32' }, dir);
    try {
      const url = await main.listening;
      const server = { url } as TestServer;
      await ok(
        server,
        'POST',
        '/process',
        lavfiProcess('hls', {
          output: [{ id: 'hls', address: '{memfs}/hls.m3u8', options: [...X264, '-f', 'hls'] }],
          autostart: true,
        }),
      );
      await waitForFile(server, '/hls.m3u8');
      await ok(server, 'PUT', '/process/hls/command', { command: 'stop' });
      await waitForState(server, 'hls', 'finished', 20_000);
      const reports = (await readdir(join(dir, 'data'))).filter((name) => name.startsWith('ffmpeg-'));
      assert.deepEqual(reports, []);
    } finally {
      main.child.kill('SIGTERM');
      await main.exited;
    }
  });
});
