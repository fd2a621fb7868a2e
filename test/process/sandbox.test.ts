import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { sandboxArgs, type SandboxPlaces } from '../../src/process/supervise/index.js';
import { startMain } from '../helpers/main-process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { getReport, getState, isAlive, lavfiProcess, ok, waitFor, waitForState } from './support.js';

/** A server whose log lines are kept, with the given `ffmpeg.sandbox`. */
async function sandboxServer(mode: 'on' | 'off'): Promise<{ server: TestServer; lines: string[] }> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const server = await startServer({ config: { ffmpeg: { sandbox: mode } }, logger });
  return { server, lines };
}

/** Field `n` of /proc/<pid>/stat (1-based, as in proc(5)). */
async function statField(pid: number, n: number): Promise<string> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[n - 3] as string;
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
}

/** A process that copies a file byte for byte (the `data` format) from `from` to `to`. */
function copyProcess(id: string, from: string, to: string): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: from, options: ['-f', 'data'] }],
    output: [{ id: 'out', address: to, options: ['-map', '0', '-c', 'copy', '-f', 'data'] }],
    options: ['-loglevel', 'info'],
    reconnect: false,
    autostart: true,
  };
}

describe('encoder sandbox (issue 10 item 2, ffmpeg.sandbox)', () => {
  let on: { server: TestServer; lines: string[] };
  let off: { server: TestServer; lines: string[] };
  let outside: string;
  before(async () => {
    on = await sandboxServer('on');
    off = await sandboxServer('off');
    // Outside /tmp (the sandbox's /tmp is its own): the read-only root is what refuses the write.
    outside = await mkdtemp('/var/tmp/streamcore-sandbox-outside-');
  });
  after(async () => {
    await on.server.close();
    await off.server.close();
    await rm(outside, { recursive: true, force: true });
  });

  it('says at start whether it is on', () => {
    assert.ok(
      on.lines.some((line) => /"sandbox":"on"/.test(line) && /encoder sandbox on/.test(line)),
      on.lines.join(''),
    );
    assert.ok(
      off.lines.some((line) => /"sandbox":"off"/.test(line)),
      off.lines.join(''),
    );
  });

  it('runs the encoder itself as state.pid: usage is its own, and a stop is graceful and leaves nothing', async () => {
    const server = on.server;
    // A picture big enough that the encoder's CPU time and memory stand out from bwrap's.
    const input = [{ id: 'in', address: 'testsrc=size=320x240:rate=25', options: ['-re', '-f', 'lavfi'] }];
    const hls = ['-c:v', 'mpeg2video', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0'];
    const output = [{ id: 'out', address: '{diskfs}/sandboxed.m3u8', options: hls }];
    await ok(server, 'POST', '/process', lavfiProcess('hls', { input, output, autostart: true }));
    const running = await waitForState(server, 'hls', 'running', 20_000, 25);
    const pid = running.pid;
    assert.equal((await readFile(`/proc/${pid}/comm`, 'utf8')).trim(), 'ffmpeg');
    // pid 1 of its own pid namespace, started by bwrap.
    assert.match(await readFile(`/proc/${pid}/status`, 'utf8'), new RegExp(`^NSpid:\\s+${pid}\\s+1$`, 'm'));
    const bwrap = Number(await statField(pid, 4));
    assert.equal((await readFile(`/proc/${bwrap}/comm`, 'utf8')).trim(), 'bwrap');

    // Usage is sampled every second from state.pid: the encoder works, bwrap only waits.
    const busy = await waitFor(
      async () => {
        const state = await getState(server, 'hls');
        return state.cpu_usage > 0 && state.memory_bytes > 0 ? state : undefined;
      },
      15_000,
      'CPU and memory of the encoder',
    );
    const [encoderRss, bwrapRss] = [await rssBytes(pid), await rssBytes(bwrap)];
    assert.ok(encoderRss > 2 * bwrapRss, `ffmpeg ${encoderRss} B, bwrap ${bwrapRss} B`);
    assert.ok(
      Math.abs(busy.memory_bytes - encoderRss) < Math.abs(busy.memory_bytes - bwrapRss),
      `memory_bytes ${busy.memory_bytes} is the encoder's (${encoderRss}), not bwrap's (${bwrapRss})`,
    );
    assert.equal(await statField(bwrap, 14), '0', 'bwrap itself used no CPU time in user mode');

    await ok(server, 'PUT', '/process/hls/command', { command: 'stop' });
    const stopped = await waitForState(server, 'hls', 'finished', 10_000);
    assert.equal(stopped.exec, 'finished', 'exit 255 after SIGINT, not a kill');
    const playlist = await readFile(join(server.config.storage.disk.dir, 'sandboxed.m3u8'), 'utf8');
    assert.match(playlist, /#EXT-X-ENDLIST/, 'ffmpeg closed the playlist: it got the SIGINT');
    const report = await getReport(server, 'hls');
    const log = [...report.log, ...report.history.flatMap((run) => run.log)].map(([, line]) => line);
    assert.ok(
      log.some((line) => /Exiting normally, received signal 2/.test(line)),
      log.join('\n'),
    );
    await waitFor(
      () => Promise.resolve(!isAlive(pid) && !isAlive(bwrap)),
      5_000,
      'ffmpeg and bwrap to be gone',
    );
  });

  it('hides the db and the config file even where the policy lets a path through (a symbolic link)', async () => {
    for (const { server } of [on, off]) {
      const data = server.config.storage.disk.dir;
      await mkdir(server.config.db.dir, { recursive: true });
      await writeFile(join(server.config.db.dir, 'secret.txt'), 'db-secret-value\n');
      // The policy checks addresses as written: links inside the disk directory are followed.
      await symlink(join(server.config.db.dir, 'secret.txt'), join(data, 'db-link.txt'));
      await symlink(join(server.dir, 'config.json'), join(data, 'config-link.json'));
      await ok(server, 'POST', '/process', copyProcess('db', '{diskfs}/db-link.txt', '{diskfs}/db-copy.bin'));
      await ok(
        server,
        'POST',
        '/process',
        copyProcess('cfg', '{diskfs}/config-link.json', '{diskfs}/cfg-copy.bin'),
      );
    }
    // Without the sandbox the policy alone lets both copies through: the test can fail.
    await waitForState(off.server, 'db', 'finished', 15_000);
    await waitForState(off.server, 'cfg', 'finished', 15_000);
    const offData = off.server.config.storage.disk.dir;
    assert.equal(await readFile(join(offData, 'db-copy.bin'), 'utf8'), 'db-secret-value\n');
    assert.match(await readFile(join(offData, 'cfg-copy.bin'), 'utf8'), /"db"/);

    const onData = on.server.config.storage.disk.dir;
    await waitForState(on.server, 'db', 'failed', 15_000);
    const dbLog = (await getReport(on.server, 'db')).log.map(([, line]) => line).join('\n');
    assert.match(dbLog, /No such file or directory/, dbLog);
    await assert.rejects(stat(join(onData, 'db-copy.bin')), { code: 'ENOENT' });
    // The config file reads as empty (/dev/null over it): nothing of it arrives.
    await waitFor(async () => (await getState(on.server, 'cfg')).exec !== 'running', 15_000, 'cfg to end');
    const copied = await readFile(join(onData, 'cfg-copy.bin'), 'utf8').catch(() => '');
    assert.equal(copied, '');
  });

  it('refuses writes outside the writable places even where the policy lets them through', async () => {
    for (const { server } of [on, off]) {
      const data = server.config.storage.disk.dir;
      const target = join(outside, server === on.server ? 'on' : 'off');
      await mkdir(target);
      await writeFile(join(data, 'in.txt'), 'payload\n');
      await symlink(target, join(data, 'outside'));
      await ok(server, 'POST', '/process', copyProcess('write', '{diskfs}/in.txt', '{diskfs}/outside/w.bin'));
    }
    await waitForState(off.server, 'write', 'finished', 15_000);
    assert.equal(await readFile(join(outside, 'off', 'w.bin'), 'utf8'), 'payload\n');

    await waitForState(on.server, 'write', 'failed', 15_000);
    const log = (await getReport(on.server, 'write')).log.map(([, line]) => line).join('\n');
    // The directory outside is not in the sandbox at all; were it shown, it would be read-only.
    assert.match(log, /No such file or directory|Read-only file system/, log);
    await assert.rejects(stat(join(outside, 'on', 'w.bin')), { code: 'ENOENT' });
  });
});

describe('ffmpeg.sandbox where bubblewrap is missing', () => {
  let dir: string;
  let bin: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-nobwrap-'));
    await mkdir(join(dir, 'config'));
    // A PATH with the encoder and setpriv but no bwrap.
    bin = join(dir, 'bin');
    await mkdir(bin);
    for (const tool of ['ffmpeg', 'setpriv', 'true']) {
      const found = process.env.PATH?.split(':')
        .map((entry) => join(entry, tool))
        .find((file) => isFile(file));
      assert.ok(found !== undefined, `${tool} in PATH`);
      await symlink(found, join(bin, tool));
    }
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function start(mode: string) {
    await writeFile(
      join(dir, 'config', 'config.json'),
      JSON.stringify({ address: '127.0.0.1:0', api: { auth: { enable: false } }, ffmpeg: { sandbox: mode } }),
    );
    return startMain({ PATH: bin }, dir);
  }

  it('"on" refuses to start and says why', async () => {
    const server = await start('on');
    const exit = await server.exited;
    assert.equal(exit.code, 1, exit.stdout);
    assert.match(
      exit.stderr,
      /ffmpeg\.sandbox is "on", but bubblewrap cannot confine encoders here \(bwrap: /,
    );
  });

  it('"auto" starts without it and logs that the sandbox is off', async () => {
    const server = await start('auto');
    await server.listening;
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /"sandbox":"off".*encoder sandbox off: bubblewrap does not work here/);
  });
});

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

describe('sandbox mounts of nested places (real bwrap)', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp('/var/tmp/streamcore-sandbox-nested-');
  });
  after(() => rm(root, { recursive: true, force: true }));

  /** Runs `script` in sh inside the sandbox; answers its stdout and exit code. */
  function inSandbox(places: SandboxPlaces, script: string): { code: number | null; out: string } {
    const args = sandboxArgs(places, 3, { command: 'sh', args: ['-c', script] });
    const info = args.indexOf('--info-fd');
    args.splice(info, 2);
    const run = spawnSync('bwrap', args, { encoding: 'utf8' });
    return { code: run.status, out: `${run.stdout}${run.stderr}` };
  }

  it('keeps a disk directory inside a hidden db directory writable, and the rest of it hidden', async () => {
    const db = join(root, 'db');
    const data = join(db, 'data');
    await mkdir(data, { recursive: true });
    await writeFile(join(db, 'db.json'), '{"secret":1}');
    const places = { readable: () => [], writable: () => [data], hidden: () => [db], hostDevices: false };
    const run = inSandbox(places, `touch ${data}/w && ls ${db}; cat ${db}/db.json; touch ${db}/x`);
    assert.match(run.out, /^data$/m);
    assert.doesNotMatch(run.out, /secret/);
    assert.match(run.out, /Read-only file system/, 'the covering tmpfs takes no writes');
    assert.ok(isFile(join(data, 'w')));
  });

  it('hides a config file inside the disk directory, which stays writable around it', async () => {
    const data = join(root, 'disk');
    await mkdir(data);
    const config = join(data, 'config.json');
    await writeFile(config, '{"jwt":"secret"}');
    const places = { readable: () => [], writable: () => [data], hidden: () => [config], hostDevices: false };
    const run = inSandbox(places, `cat ${config}; echo ok > ${data}/other; echo "[$(cat ${data}/other)]"`);
    assert.equal(run.code, 0, run.out);
    assert.doesNotMatch(run.out, /secret/);
    assert.match(run.out, /\[ok\]/);
  });
});
