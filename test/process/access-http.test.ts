import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok, waitFor, waitForState } from './support.js';
import { freePort } from '../helpers/free-port.js';

/**
 * Issue 10 item 2 over real HTTP: every escape an attacker with a token tried is refused with a
 * 400 naming the address or option, nothing is created or written, and the configs people use
 * (memfs HLS, disk files, RTMP and SRT, lavfi) are still accepted and run with the real ffmpeg.
 */

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

interface Io {
  id?: string;
  address: string;
  options?: string[];
}

const LAVFI: Io = { id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-f', 'lavfi', '-t', '2'] };
const NULL_OUT: Io = { id: 'out', address: '-', options: ['-f', 'null'] };

function body(
  id: string,
  parts: { input?: Io[]; output?: Io[]; options?: string[] },
): Record<string, unknown> {
  return {
    id,
    input: parts.input ?? [LAVFI],
    output: parts.output ?? [NULL_OUT],
    options: parts.options ?? ['-loglevel', 'info'],
    autostart: true,
  };
}

describe('encoder access policy over HTTP', () => {
  let server: TestServer;
  let dir: string;
  /** A directory beside the data directory: inside the server's tree, outside what it serves. */
  let outside: string;
  let port: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-access-'));
    outside = join(dir, 'outside');
    await mkdir(outside);
    server = await startServer({
      dir,
      config: {
        // The db directory inside the disk directory: the policy must still keep encoders out of it.
        db: { dir: join(dir, 'data', 'db') },
        rtmp: { enable: true, address: '127.0.0.1:0', app: '/live' },
      },
    });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** POSTs `config` and expects a 400 whose details name every fragment. */
  async function refused(config: Record<string, unknown>, ...fragments: (string | RegExp)[]): Promise<void> {
    const answer = await call<Envelope>(server, 'POST', '/process', config);
    assert.equal(answer.status, 400, `${JSON.stringify(config)} → ${answer.text}`);
    assert.equal(answer.body.code, 400);
    assert.equal(answer.body.message, 'Invalid process config');
    const details = answer.body.details.join('\n');
    for (const fragment of fragments) {
      if (typeof fragment === 'string')
        assert.ok(details.includes(fragment), `"${fragment}" not in: ${details}`);
      else assert.match(details, fragment);
    }
  }

  it('refuses every output escape, naming the address or option', async () => {
    const cases: [string, Record<string, unknown>, ...(string | RegExp)[]][] = [
      [
        'tee protocol',
        body('tee', {
          output: [{ address: `tee:${outside}/w.bin|{diskfs}/ok.bin`, options: ['-f', 'mpegts'] }],
        }),
        `"${outside}/w.bin" writes ${outside}/w.bin, outside the disk directory`,
      ],
      [
        'crypto',
        body('crypto', { output: [{ address: `crypto:${outside}/c.ts`, options: ['-f', 'mpegts'] }] }),
        `"${outside}/c.ts" writes ${outside}/c.ts`,
      ],
      [
        'md5',
        body('md5', { output: [{ address: `md5:${outside}/sum`, options: ['-f', 'mpegts'] }] }),
        `"${outside}/sum" writes ${outside}/sum`,
      ],
      [
        'a bare path among an output options',
        body('bare-out', {
          output: [{ address: '{diskfs}/ok.ts', options: ['-f', 'mpegts', `${outside}/bare.ts`] }],
        }),
        `output[0].options[2]: "${outside}/bare.ts" is neither an option nor an option's value`,
      ],
      [
        'a bare path among the global options',
        body('bare-global', { options: ['-loglevel', 'info', `${outside}/bare.ts`] }),
        `options[2]: "${outside}/bare.ts" is neither an option`,
      ],
      [
        '-hls_segment_filename',
        body('hls-seg', {
          output: [
            {
              address: '{memfs}/x.m3u8',
              options: ['-f', 'hls', '-hls_segment_filename', `${outside}/seg%d.ts`],
            },
          ],
        }),
        /output\[0\]\.options\[3\] \(-hls_segment_filename\): ".*\/outside\/seg%d\.ts" writes/,
      ],
      [
        'tee muxer slave options',
        body('tee-opts', {
          output: [
            {
              address: `[f=hls:hls_segment_filename=${outside}/%d.ts]{diskfs}/a.m3u8`,
              options: ['-f', 'tee', '-map', '0:v'],
            },
          ],
        }),
        /hls_segment_filename/,
        `${outside}/%d.ts`,
      ],
      [
        'nested wrappers',
        body('nested', {
          output: [{ address: `tee:crypto:cache:${outside}/n.ts`, options: ['-f', 'mpegts'] }],
        }),
        `${outside}/n.ts`,
      ],
      [
        'a tee muxer slave wrapped in a protocol',
        body('nested-tee', {
          output: [
            {
              address: `[f=mpegts]{diskfs}/a.ts|[f=mpegts]crypto+file://${outside}/b.ts`,
              options: ['-f', 'tee', '-map', '0:v'],
            },
          ],
        }),
        `${outside}/b.ts`,
      ],
      [
        'the database directory inside the disk directory',
        body('db', { output: [{ address: '{diskfs}/db/db.json', options: ['-f', 'mpegts'] }] }),
        'inside the database directory',
      ],
      [
        'a relative path out of the disk directory',
        body('dotdot', { output: [{ address: '{diskfs}/../outside/x.ts', options: ['-f', 'mpegts'] }] }),
        `writes ${outside}/x.ts, outside the disk directory`,
      ],
      [
        "the server's own API as an output",
        body('ssrf-out', {
          output: [{ address: `http://127.0.0.1:${port}/api/v3/process`, options: ['-f', 'mpegts'] }],
        }),
        `reaches this server's own port ${port}`,
      ],
    ];
    for (const [what, config, ...fragments] of cases) {
      await refused(config, ...fragments).catch((error: unknown) => {
        throw new Error(`${what}: ${(error as Error).message}`);
      });
    }
    assert.deepEqual(await readdir(outside), [], 'nothing was written outside');
  });

  it("refuses overriding the server's own options, globally and per output", async () => {
    await refused(
      body('vstats-file', { options: ['-vstats_file', `${outside}/v.log`] }),
      'options[0]: "-vstats_file" is set by the server and cannot be overridden',
    );
    await refused(
      body('progress', { output: [{ address: '-', options: ['-f', 'null', '-progress', `${outside}/p`] }] }),
      'output[0].options[2]: "-progress" is set by the server',
    );
    await refused(body('vstats', { options: ['-vstats'] }), '"-vstats" is set by the server');
    await refused(
      body('period', { options: ['-stats_period', '60'] }),
      '"-stats_period" is set by the server',
    );
    await refused(
      body('vstats-version', {
        input: [{ ...LAVFI, options: ['-vstats_version', '1', ...(LAVFI.options ?? [])] }],
      }),
      'input[0].options[0]: "-vstats_version" is set by the server',
    );
  });

  it('refuses every input escape: files outside, the config, the own API (SSRF), nested wrappers', async () => {
    const input = (address: string, options: string[] = []): Io[] => [{ id: 'in', address, options }];
    const cases: [string, Record<string, unknown>, ...(string | RegExp)[]][] = [
      [
        'file:/etc/shadow',
        body('shadow', { input: input('file:/etc/shadow') }),
        '"/etc/shadow" reads /etc/shadow',
      ],
      [
        'the config file next to the data',
        body('config', { input: input('{diskfs}/../config.json') }),
        `input[0].address "{diskfs}/../config.json"`,
        `reads ${dir}/config.json`,
      ],
      [
        'the own API',
        body('ssrf', { input: input(`http://127.0.0.1:${port}/api`) }),
        `"http://127.0.0.1:${port}/api" reaches this server's own port ${port}`,
      ],
      [
        'the own API by another name',
        body('ssrf-names', {
          input: [
            { id: 'a', address: `http://localhost:${port}/api/v3/config` },
            { id: 'b', address: `http://[::1]:${port}/api` },
            { id: 'c', address: `http://2130706433:${port}/api` },
            { id: 'd', address: `http://127.0.0.1:${port}/memfs/../api/v3/process` },
          ],
        }),
        /input\[0\]\.address .*own port/,
        /input\[1\]\.address .*own port/,
        /input\[2\]\.address .*own port/,
        /input\[3\]\.address .*own port/,
      ],
      [
        'a cloud metadata service',
        body('metadata', { input: input('http://169.254.169.254/latest/meta-data/') }),
        'link-local',
      ],
      [
        'nested input wrappers',
        body('nested-in', {
          input: [
            { id: 'a', address: 'async:cache:file:/etc/shadow' },
            { id: 'b', address: 'subfile,,start,0,end,100,,:/etc/shadow' },
            { id: 'c', address: 'concat:{diskfs}/a.ts|/etc/passwd' },
            { id: 'd', address: 'crypto+file:///etc/shadow' },
          ],
        }),
        /input\[0\]\.address.*\/etc\/shadow/,
        /input\[1\]\.address.*\/etc\/shadow/,
        /input\[2\]\.address.*\/etc\/passwd/,
        /input\[3\]\.address.*\/etc\/shadow/,
      ],
      [
        '-i among the options',
        body('dash-i', { input: [{ ...LAVFI, options: ['-i', '/etc/shadow', ...(LAVFI.options ?? [])] }] }),
        'input[0].options[1] (-i): "/etc/shadow" reads /etc/shadow',
      ],
      [
        'a file read by a filter',
        body('filter', {
          input: input('movie=/etc/passwd', ['-f', 'lavfi']),
          output: [{ address: '-', options: ['-vf', 'drawtext=textfile=/etc/shadow', '-f', 'null'] }],
        }),
        /input\[0\]\.address.*\/etc\/passwd/,
        /output\[0\]\.options\[1\] \(-vf\).*\/etc\/shadow/,
      ],
      ['a device', body('device', { input: input('/dev/video0', ['-f', 'v4l2']) }), 'ffmpeg.access.devices'],
      [
        'sftp with the server keys',
        body('sftp', { input: input('sftp://host/x') }),
        'protocol "sftp" is not allowed',
      ],
    ];
    for (const [what, config, ...fragments] of cases) {
      await refused(config, ...fragments).catch((error: unknown) => {
        throw new Error(`${what}: ${(error as Error).message}`);
      });
    }
  });

  it('refuses an escape on update and keeps the stored config; db.json never holds a refused one', async () => {
    await ok(server, 'POST', '/process', { ...body('kept', {}), autostart: false });
    const answer = await call<Envelope>(server, 'PUT', '/process/kept', {
      output: [{ id: 'out', address: `tee:${outside}/u.bin|{diskfs}/u.bin`, options: ['-f', 'mpegts'] }],
    });
    assert.equal(answer.status, 400, answer.text);
    assert.match(answer.body.details.join('\n'), /\/outside\/u\.bin/);
    const config = await ok<{ output: Io[] }>(server, 'GET', '/process/kept/config');
    assert.equal(config.output[0]?.address, '-');
    const db = JSON.parse(await readFile(join(dir, 'data', 'db', 'db.json'), 'utf8')) as {
      process: Record<string, unknown>;
    };
    assert.deepEqual(Object.keys(db.process), ['kept']);
    assert.ok(!JSON.stringify(db).includes('outside'));
    await ok(server, 'DELETE', '/process/kept');
  });

  it('accepts and runs memfs HLS, disk files, tee to disk, memfs input, RTMP and SRT with the real ffmpeg', async () => {
    const live: Io = { id: 'in', address: 'testsrc=size=64x48:rate=10', options: ['-re', '-f', 'lavfi'] };
    await ok(
      server,
      'POST',
      '/process',
      body('hls', {
        input: [live],
        output: [
          {
            id: 'out',
            address: '{memfs}/{processid}.m3u8',
            options: [
              '-c:v',
              'libx264',
              '-preset',
              'ultrafast',
              '-g',
              '10',
              '-f',
              'hls',
              '-hls_time',
              '1',
              '-hls_segment_filename',
              '{memfs}/{processid}_%04d.ts',
            ],
          },
        ],
      }),
    );
    await ok(
      server,
      'POST',
      '/process',
      body('file', { output: [{ id: 'out', address: 'clip.ts', options: ['-f', 'mpegts'] }] }),
    );
    await ok(
      server,
      'POST',
      '/process',
      body('tee', {
        output: [
          {
            id: 'out',
            address: '[f=mpegts]{diskfs}/t1.ts|[f=mpegts]{diskfs}/t2.ts',
            options: ['-map', '0:v', '-c:v', 'mpeg2video', '-f', 'tee'],
          },
        ],
      }),
    );
    await ok(
      server,
      'POST',
      '/process',
      body('rtmp', {
        input: [live],
        output: [
          {
            id: 'out',
            address: '{rtmp,name=acc}',
            options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'flv'],
          },
        ],
      }),
    );
    const srtPort = await freePort();
    await ok(
      server,
      'POST',
      '/process',
      body('srt-out', {
        input: [live],
        output: [
          { id: 'out', address: `srt://127.0.0.1:${srtPort}?mode=listener`, options: ['-f', 'mpegts'] },
        ],
      }),
    );
    await ok(
      server,
      'POST',
      '/process',
      body('srt-in', { input: [{ id: 'in', address: `srt://127.0.0.1:${srtPort}?mode=caller` }] }),
    );

    await waitFor(
      async () => (await fetch(`${server.url}/memfs/hls.m3u8`)).status === 200,
      20_000,
      'the memfs playlist',
    );
    await ok(
      server,
      'POST',
      '/process',
      body('memfs-in', { input: [{ id: 'in', address: '{memfs}/hls.m3u8', options: ['-re'] }] }),
    );
    await waitForState(server, 'memfs-in', 'running', 20_000, 5);
    await waitForState(server, 'srt-in', 'running', 20_000, 5);
    await waitFor(
      async () => (await ok<{ name: string }[]>(server, 'GET', '/rtmp')).some((s) => s.name === '/live/acc'),
      20_000,
      'the RTMP publication',
    );
    await waitForState(server, 'file', 'finished', 20_000);
    await waitForState(server, 'tee', 'finished', 20_000);
    for (const name of ['clip.ts', 't1.ts', 't2.ts']) {
      assert.ok(existsSync(join(dir, 'data', name)), `${name} was written into the disk directory`);
    }
    for (const id of ['memfs-in', 'srt-in', 'srt-out', 'rtmp', 'tee', 'file', 'hls']) {
      await ok(server, 'DELETE', `/process/${id}`);
    }
  });
});
