// test-alone: its encoders must exceed CPU limits in time, which a neighbour's load can prevent
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { pino } from 'pino';
import { EncoderRegistry } from '../../src/process/index.js';
import { startMain } from '../helpers/main-process.js';
import { lavfiProcess } from './support.js';

/** The state of a live pid from /proc (`R`, `S`, `T` …), undefined when it is gone or a zombie. */
async function liveState(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const state = text.slice(text.lastIndexOf(')') + 2).split(' ')[0];
  return state === 'Z' ? undefined : state;
}

async function until<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function runningPid(url: string, id: string): Promise<number> {
  return until(
    async () => {
      const answer = await fetch(`${url}/api/v3/process/${id}/state`);
      if (answer.status !== 200) return undefined;
      const state = (await answer.json()) as { exec: string; pid: number; runtime_seconds: number };
      // Past its start-up: an encoder still opening its streams may fail on the broken pipes by
      // itself, which would hide a missing parent-death signal.
      return state.exec === 'running' && state.pid > 0 && state.runtime_seconds >= 3 ? state.pid : undefined;
    },
    20_000,
    `process ${id} running`,
  );
}

describe('no orphaned encoders (issue 10 item 7)', () => {
  let dir: string;
  const pids: number[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-leash-'));
    await mkdir(join(dir, 'config'));
    await writeFile(
      join(dir, 'config', 'config.json'),
      JSON.stringify({ address: '127.0.0.1:0', api: { auth: { enable: false } } }),
    );
  });
  after(async () => {
    // Only the encoders these tests started, by pid, if a failed assertion left one.
    for (const pid of pids) if ((await liveState(pid)) !== undefined) process.kill(pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  async function startWithProcess(id: string, env: Record<string, string> = {}) {
    const server = startMain(env, dir);
    const url = await server.listening;
    // Audio only: no per-frame video statistics, whose FIFO would break with the server and stop
    // ffmpeg by itself. Progress and log pipes breaking do not stop it (it ignores SIGPIPE).
    const audio = {
      input: [{ id: 'in', address: 'sine=frequency=440:sample_rate=8000', options: ['-re', '-f', 'lavfi'] }],
      autostart: true,
    };
    const created = await fetch(`${url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(lavfiProcess(id, audio)),
    });
    assert.equal(created.status, 200, await created.text());
    const pid = await runningPid(url, id);
    pids.push(pid);
    return { server, url, pid };
  }

  it('an encoder dies with a server killed by SIGKILL', async () => {
    const { server, pid } = await startWithProcess('leashed');
    assert.match(await readFile(`/proc/${pid}/cmdline`, 'utf8'), /ffmpeg/);
    server.child.kill('SIGKILL');
    await server.exited;
    await until(
      async () => ((await liveState(pid)) === undefined ? true : undefined),
      10_000,
      'the encoder to exit',
    );
    // Clean the db for the next test: the stored process would start again.
    await rm(join(dir, 'config', 'db.json'), { force: true });
  });

  it('inside the sandbox, even a stopped encoder dies with the server', async () => {
    const { server, pid } = await startWithProcess('sandboxed', { CORE_FFMPEG_SANDBOX: 'on' });
    // bwrap's --die-with-parent: SIGKILL, which a stopped process cannot hold off.
    process.kill(pid, 'SIGSTOP');
    server.child.kill('SIGKILL');
    await server.exited;
    await until(
      async () => ((await liveState(pid)) === undefined ? true : undefined),
      10_000,
      'the stopped encoder to exit',
    );
    await rm(join(dir, 'config', 'db.json'), { force: true });
  });

  it('a restart stops an encoder that survived before starting its own', async () => {
    // Without the sandbox (whose bwrap takes a stopped encoder along when it dies), the stopped
    // encoder outlives the server, as one whose parent-death signal was lost would.
    const plain = { CORE_FFMPEG_SANDBOX: 'off' };
    const first = await startWithProcess('survivor', plain);
    // A stopped encoder does not act on the parent-death SIGTERM: it outlives the server.
    process.kill(first.pid, 'SIGSTOP');
    first.server.child.kill('SIGKILL');
    await first.server.exited;
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await liveState(first.pid), 'T', 'the stopped encoder survived the server');
    assert.ok((await readdir(join(dir, 'config', 'encoders'))).includes(String(first.pid)));

    const second = startMain(plain, dir);
    const url = await second.listening;
    assert.equal(await liveState(first.pid), undefined, 'stopped before the server listened');
    const pid = await runningPid(url, 'survivor');
    pids.push(pid);
    assert.notEqual(pid, first.pid);
    second.child.kill('SIGTERM');
    const exit = await second.exited;
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /stopping an encoder left running by a previous server/);
    assert.deepEqual(await readdir(join(dir, 'config', 'encoders')), [], 'no pid files after a clean stop');
  });
});

describe('encoder registry', () => {
  it('stops a recorded survivor, and leaves a process that only reuses a recorded pid', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-registry-'));
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = sleeper.pid as number;
    try {
      const registry = new EncoderRegistry({
        dir,
        procRoot: '/proc',
        logger: pino({ level: 'silent' }),
        kill: (target, signal) => process.kill(target, signal),
        graceMs: 500,
      });
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
      // Same pid, other start time: a later process that got the number.
      await writeFile(join(dir, String(pid)), JSON.stringify({ pid, start: `${start}0` }));
      assert.deepEqual(await registry.stopSurvivors(), []);
      assert.notEqual(await liveState(pid), undefined);
      assert.deepEqual(await readdir(dir), [], 'the stale file is removed');

      await writeFile(join(dir, String(pid)), JSON.stringify({ pid, start }));
      const exited = new Promise((resolve) => sleeper.once('exit', resolve));
      assert.deepEqual(await registry.stopSurvivors(), [pid]);
      await exited;
    } finally {
      sleeper.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
