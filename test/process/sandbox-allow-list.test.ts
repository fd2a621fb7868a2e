import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sandboxPlaces } from '../../src/process/service/encoder-spawn.js';
import { sandboxArgs } from '../../src/process/supervise/index.js';
import { HOST_FILES } from '../../src/process/supervise/sandbox-host-places.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, getReport, getState, ok, waitFor, waitForState } from './support.js';

/** What a file in the disk directory must never receive: the contents of the file outside. */
const SECRET = 'TOP-SECRET-outside-the-served-directories';

/** A process reading `{diskfs}/<list>` with `inputOptions` and copying it to `{diskfs}/<id>.bin`. */
function copyOut(id: string, list: string, inputOptions: string[]): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: `{diskfs}/${list}`, options: inputOptions }],
    output: [
      { id: 'out', address: `{diskfs}/${id}.bin`, options: ['-map', '0', '-c', 'copy', '-f', 'data'] },
    ],
    options: ['-loglevel', 'info'],
    reconnect: false,
    autostart: true,
  };
}

/** The process's log lines, of this run and the earlier ones. */
async function logOf(server: TestServer, id: string): Promise<string> {
  const report = await getReport(server, id);
  return [...report.log, ...report.history.flatMap((run) => run.log)].map(([, line]) => line).join('\n');
}

async function endOf(server: TestServer, id: string): Promise<string> {
  const state = await waitFor(
    async () => {
      const current = await getState(server, id);
      return current.exec === 'finished' || current.exec === 'failed' ? current : undefined;
    },
    20_000,
    `${id} to end`,
  );
  return state.exec;
}

async function readOrNothing(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

describe('the sandbox shows an encoder only what it needs (issue 24 item 1)', () => {
  let on: TestServer;
  let off: TestServer;
  let outside: string;
  let secretFile: string;
  before(async () => {
    on = await startServer({ config: { ffmpeg: { sandbox: 'on' } } });
    off = await startServer({ config: { ffmpeg: { sandbox: 'off' } } });
    // Outside /tmp: the sandbox of before hid /tmp (its own tmpfs) but showed the rest of the root.
    outside = await mkdtemp('/var/tmp/streamcore-exfil-');
    secretFile = join(outside, 'secret.txt');
    await writeFile(secretFile, `${SECRET}\n`.repeat(40));
    for (const server of [on, off]) {
      const data = server.config.storage.disk.dir;
      await writeFile(join(data, 'list.txt'), `file '${secretFile}'\n`);
      const playlist = ['#EXTM3U', '#EXT-X-TARGETDURATION:10', '#EXTINF:10.0,', secretFile, '#EXT-X-ENDLIST'];
      await writeFile(join(data, 'list.m3u8'), `${playlist.join('\n')}\n`);
    }
  });
  after(async () => {
    await on.close();
    await off.close();
    await rm(outside, { recursive: true, force: true });
  });

  it('refuses -safe off in every spelling ffmpeg reads as 0 (or not at all), and runs it on', async () => {
    const spellings = [
      '0',
      'false',
      'no',
      '00',
      '-0',
      '+0',
      ' 0',
      '\t0',
      '',
      'OFF',
      'n',
      'disabled',
      'no,',
      'n,no',
      '4294967296',
      '-99999999999999999999',
      '0.0',
      '0x0',
      'auto',
    ];
    const letThrough: string[] = [];
    for (const [index, spelling] of spellings.entries()) {
      const answer = await call<{ details?: string[] }>(
        on,
        'POST',
        '/process',
        copyOut(`safe-${index}`, 'list.txt', ['-f', 'concat', '-safe', spelling]),
      );
      if (answer.status !== 400 || !/-safe/.test((answer.body.details ?? []).join('\n'))) {
        letThrough.push(`${JSON.stringify(spelling)}: ${answer.status}`);
      }
    }
    // Inside an option list too (the HLS demuxer hands these to its segments' demuxer).
    const nested = await call(
      on,
      'POST',
      '/process',
      copyOut('safe-nested', 'list.m3u8', ['-seg_format_options', 'safe=no']),
    );
    if (nested.status !== 400) letThrough.push(`seg_format_options safe=no: ${nested.status}`);
    assert.deepEqual(letThrough, []);

    // On (in two spellings), the concat demuxer itself refuses a list naming a file outside.
    for (const [id, spelling] of [
      ['safe-on-1', '1'],
      ['safe-on-yes', 'yes'],
    ] as const) {
      await ok(on, 'POST', '/process', copyOut(id, 'list.txt', ['-f', 'concat', '-safe', spelling]));
      assert.equal(await endOf(on, id), 'failed');
      assert.match(await logOf(on, id), /Unsafe file name/);
      assert.doesNotMatch(await readOrNothing(join(on.config.storage.disk.dir, `${id}.bin`)), /TOP-SECRET/);
    }
  });

  it('refuses a device format in every spelling ffmpeg opens it by', async () => {
    const letThrough: string[] = [];
    for (const [index, format] of [
      'V4L2',
      'video4linux2,v4l2',
      'Video4Linux2,V4L2',
      'video4linux2,v4',
    ].entries()) {
      const answer = await call<{ details?: string[] }>(on, 'POST', '/process', {
        id: `device-${index}`,
        input: [{ id: 'in', address: '/dev/video0', options: ['-f', format] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
        autostart: false,
      });
      if (answer.status !== 400 || !/ffmpeg\.access\.devices/.test((answer.body.details ?? []).join('\n'))) {
        letThrough.push(`${format}: ${answer.status}`);
      }
    }
    assert.deepEqual(letThrough, []);
  });

  it('copies nothing out through an HLS playlist whose segment names a file outside', async () => {
    const options = [
      '-allowed_extensions',
      'ALL',
      '-allowed_segment_extensions',
      'ALL',
      '-extension_picky',
      '0',
    ];
    for (const server of [on, off])
      await ok(server, 'POST', '/process', copyOut('exfil', 'list.m3u8', options));
    // Without the sandbox the policy lets it through (it cannot read the playlist): the test can fail.
    await endOf(off, 'exfil');
    assert.match(await readOrNothing(join(off.config.storage.disk.dir, 'exfil.bin')), /TOP-SECRET/);

    await endOf(on, 'exfil');
    assert.doesNotMatch(await readOrNothing(join(on.config.storage.disk.dir, 'exfil.bin')), /TOP-SECRET/);
    assert.match(await logOf(on, 'exfil'), /Failed to open segment/);
  });

  it('shows nothing of the host but the allow-list (in the places of the running server), enough for what the UI runs', async () => {
    const places = sandboxPlaces({ config: on.config, configFile: join(on.dir, 'config.json') });
    const data = on.config.storage.disk.dir;
    const script = [
      `ffmpeg -nostdin -v error -f concat -safe 0 -i ${data}/list.txt -map 0 -c copy -f data -y ${data}/direct.bin`,
      'echo "ffmpeg=$?"',
      `cat ${secretFile}`,
      'echo "/:" $(ls -A /)',
      'echo "/etc:" $(ls -A /etc)',
      'echo "/var:" $(ls -A /var)',
    ].join('; ');
    const args = sandboxArgs(places, 3, { command: 'sh', args: ['-c', script], cwd: data });
    args.splice(args.indexOf('--info-fd'), 2);
    const run = spawnSync('bwrap', args, { encoding: 'utf8' });
    const out = `${run.stdout}${run.stderr}`;
    assert.match(out, /ffmpeg=1/, out);
    assert.doesNotMatch(out, /TOP-SECRET/);
    assert.doesNotMatch(await readOrNothing(join(data, 'direct.bin')), /TOP-SECRET/);

    const listing = (name: string): string[] =>
      (new RegExp(`^${name}:(.*)$`, 'm').exec(run.stdout)?.[1] ?? '').trim().split(/\s+/);
    const programRoots = (await readdir('/')).filter((entry) => /^(usr|bin|sbin|lib.*)$/.test(entry));
    // The disk directory's own path is there too (under /tmp unless TMPDIR says otherwise).
    const [, dataTop, dataNext] = data.split('/');
    const rootEntries = new Set([...programRoots, 'dev', 'etc', 'proc', 'tmp', 'var', dataTop]);
    assert.deepEqual(listing('/').sort(), [...rootEntries].sort());
    const etc = listing('/etc');
    // The first entries under /etc of the host files the sandbox shows (and nothing else).
    const allowedEtc = HOST_FILES.filter((file) => file.startsWith('/etc/')).map(
      (file) => file.split('/')[2],
    );
    assert.deepEqual(
      etc.filter((entry) => !allowedEtc.includes(entry)),
      [],
    );
    assert.ok(etc.includes('resolv.conf') && etc.includes('fonts'), etc.join(' '));
    assert.deepEqual(
      listing('/var').filter((entry) => entry !== 'cache' && !(dataTop === 'var' && entry === dataNext)),
      [],
    );

    // What the UI runs still runs: drawtext with a system font to memfs HLS, read back by name.
    await ok(on, 'POST', '/process', {
      id: 'ui',
      input: [{ id: 'in', address: 'testsrc=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'out',
          address: '{memfs}/ui.m3u8',
          options: [
            '-vf',
            'drawtext=text=live:fontsize=20',
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
          ],
        },
      ],
      options: ['-loglevel', 'info'],
      autostart: true,
    });
    await waitForState(on, 'ui', 'running', 20_000, 15);
    await waitFor(
      async () => (await fetch(`${on.url}/memfs/ui.m3u8`)).status === 200,
      15_000,
      'the playlist',
    );
    // `localhost` is resolved inside the sandbox (/etc/hosts, nsswitch.conf).
    const port = new URL(on.url).port;
    await ok(on, 'POST', '/process', {
      id: 'reader',
      input: [{ id: 'in', address: `http://localhost:${port}/memfs/ui.m3u8`, options: [] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      options: ['-loglevel', 'info'],
      autostart: true,
    });
    await waitForState(on, 'reader', 'running', 20_000, 5);
    assert.doesNotMatch(await logOf(on, 'ui'), /Fontconfig error|Cannot find a valid font/);
    for (const id of ['reader', 'ui']) await ok(on, 'PUT', `/process/${id}/command`, { command: 'stop' });
  });
});

describe('ffmpeg.binary anywhere: it runs in the sandbox or start-up stops (issue 24 item 1)', () => {
  const standIn = '#!/bin/sh\necho "stand-in at $0" >&2\nexec ffmpeg "$@"\n';
  let dir: string;
  before(async () => {
    // Under /tmp, which the sandbox replaces with its own.
    dir = await mkdtemp(join(tmpdir(), 'streamcore-binary-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('runs a binary under /tmp', async () => {
    const binary = join(dir, 'bin', 'ffmpeg');
    await mkdir(join(dir, 'bin'));
    await writeFile(binary, standIn);
    await chmod(binary, 0o755);
    const server = await startServer({ config: { ffmpeg: { sandbox: 'on', binary } } });
    try {
      await ok(server, 'POST', '/process', {
        id: 'stand-in',
        input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-re', '-f', 'lavfi'] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
        options: ['-loglevel', 'info'],
        autostart: true,
      });
      await waitForState(server, 'stand-in', 'running', 20_000, 5);
      assert.match(await logOf(server, 'stand-in'), /stand-in at /);
    } finally {
      await server.close();
    }
  });

  it('stops start-up, saying why, when the binary lies in a hidden place (db.dir)', async () => {
    const serverDir = join(dir, 'server');
    const binary = join(serverDir, 'db', 'ffmpeg');
    await mkdir(join(serverDir, 'db'), { recursive: true });
    await writeFile(binary, standIn);
    await chmod(binary, 0o755);
    await assert.rejects(
      startServer({ dir: serverDir, config: { ffmpeg: { binary } } }),
      /ffmpeg\.binary ".*\/db\/ffmpeg" cannot run in the encoder sandbox \(bwrap: execvp .*\/db\/ffmpeg: No such file or directory\); .*db\.dir.*set ffmpeg\.sandbox to "off"/,
    );
  });

  it('stops start-up, saying why, when the binary needs what the sandbox does not show', async () => {
    // A script whose interpreter lies outside every shown place: it runs on the host only.
    const elsewhere = await mkdtemp('/var/tmp/streamcore-interpreter-');
    try {
      await copyFile('/bin/sh', join(elsewhere, 'sh'));
      const binary = join(dir, 'script', 'ffmpeg');
      await mkdir(join(dir, 'script'));
      await writeFile(binary, standIn.replace('#!/bin/sh', `#!${elsewhere}/sh`));
      await chmod(binary, 0o755);
      assert.equal(spawnSync(binary, ['-version']).status, 0, 'it runs outside the sandbox');
      await assert.rejects(
        startServer({ config: { ffmpeg: { binary, sandbox: 'auto' } } }),
        /ffmpeg\.binary ".*\/script\/ffmpeg" cannot run in the encoder sandbox \(bwrap: execvp .*: No such file or directory\); the sandbox shows/,
      );
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
});
