import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { TestClock } from '../helpers/test-clock.js';
import {
  FFMPEG_FIXTURES,
  getReport,
  getState,
  isAlive,
  lavfiProcess,
  ok,
  sleep,
  waitFor,
  waitForState,
  type ProcessReport,
  type ProcessState,
} from './support.js';

/** Waits until `id` has ended `runs` runs and waits for its reconnect. */
function reconnectPending(server: TestServer, id: string, runs: number): Promise<ProcessState> {
  return waitFor(
    async () => {
      const state = await getState(server, id);
      if (state.exec !== 'failed' || state.reconnect_seconds < 0) return undefined;
      return (await getReport(server, id)).history.length >= runs - 1 ? state : undefined;
    },
    15_000,
    `run ${runs} of ${id} to fail and wait for its reconnect`,
  );
}

/**
 * The report of `id` (which fails at once) once it has run three times: the first run and two
 * reconnects, the clock moved past each reconnect delay as soon as it is pending.
 */
async function afterTwoReconnects(
  server: TestServer,
  clock: TestClock,
  id: string,
  delayMs: number,
): Promise<ProcessReport> {
  for (const runs of [1, 2]) {
    await reconnectPending(server, id, runs);
    clock.advance(delayMs);
  }
  return waitFor(
    async () => {
      const current = await getReport(server, id);
      return current.history.length >= 2 ? current : undefined;
    },
    15_000,
    `two reconnect attempts of ${id}`,
  );
}

/** Asserts that the runs in `report` started at least `seconds` apart (Unix seconds). */
function assertRunsApart(report: ProcessReport, seconds: number): void {
  const runs = [...report.history.map((run) => run.created_at), report.created_at];
  for (let i = 1; i < runs.length; i++) {
    assert.ok(
      (runs[i] as number) - (runs[i - 1] as number) >= seconds,
      `attempts ${runs.join(', ')} are ${seconds} s apart`,
    );
  }
}

describe('supervision with the real ffmpeg', () => {
  // The supervisor's timers (reconnect delay, stale timeout, limits) run on this clock.
  const clock = new TestClock();
  let server: TestServer;
  before(async () => {
    server = await startServer({ now: clock.now, schedule: clock.schedule });
  });
  after(() => server.close());

  it('goes through the states on start, stop, restart and reload', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('states'));
    let state = await getState(server, 'states');
    assert.deepEqual([state.exec, state.order], ['finished', 'stop']);

    await ok(server, 'PUT', '/process/states/command', { command: 'start' });
    state = await waitForState(server, 'states', 'running', 15_000, 5);
    assert.equal(state.order, 'start');
    assert.ok(state.pid > 0 && isAlive(state.pid));
    const firstPid = state.pid;
    const later = await waitForState(server, 'states', 'running', 15_000, state.progress.frame + 5);
    assert.ok(later.progress.frame > state.progress.frame, 'frames grow while it runs');

    await ok(server, 'PUT', '/process/states/command', { command: 'stop' });
    state = await getState(server, 'states');
    assert.deepEqual(
      [state.exec, state.order],
      ['finished', 'stop'],
      'SIGINT makes ffmpeg exit with 255: finished',
    );
    assert.equal(isAlive(firstPid), false);

    await ok(server, 'PUT', '/process/states/command', { command: 'restart' });
    state = await waitForState(server, 'states', 'running', 15_000, 1);
    assert.equal(state.order, 'start');
    const restartedPid = state.pid;
    assert.notEqual(restartedPid, firstPid);

    await ok(server, 'PUT', '/process/states/command', { command: 'restart' });
    state = await waitForState(server, 'states', 'running', 15_000, 1);
    assert.notEqual(state.pid, restartedPid, 'restart replaces a running child');

    const beforeReload = state.pid;
    await ok(server, 'PUT', '/process/states/command', { command: 'reload' });
    state = await waitForState(server, 'states', 'running', 15_000, 1);
    assert.equal(state.order, 'start');
    assert.notEqual(state.pid, beforeReload, 'reload replaces the child');
    assert.equal(isAlive(beforeReload), false);

    const report = await getReport(server, 'states');
    assert.equal(report.history.length, 3, 'ffmpeg.log.max_history earlier runs are kept');
    assert.ok(report.history.every((run) => run.prelude.some((line) => line.startsWith('Input #0, lavfi'))));
    assert.ok(report.prelude.some((line) => line.includes('Stream mapping:')));
    assert.ok(report.log.length > 0 && report.log.length <= 50);
    assert.ok(report.log.every(([time]) => /^\d+$/.test(time)));
    await ok(server, 'DELETE', '/process/states');
  });

  it('fails a process whose input does not exist and reconnects at the configured delay', async () => {
    // Longer than any real wait of the test: only the clock the test moves brings the reconnect.
    const delaySeconds = 30;
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('missing', {
        input: [{ id: 'in', address: '{diskfs}/does-not-exist.mp4' }],
        reconnect: true,
        reconnect_delay_seconds: delaySeconds,
        autostart: true,
      }),
    );
    const failed = await reconnectPending(server, 'missing', 1);
    assert.ok(
      failed.reconnect_seconds > 0 && failed.reconnect_seconds <= delaySeconds,
      `reconnect in ${failed.reconnect_seconds} s`,
    );
    assert.equal(failed.order, 'start');
    // Five seconds before the delay is over, nothing has started yet.
    clock.advance((delaySeconds - 5) * 1000);
    const waiting = await getState(server, 'missing');
    assert.equal(waiting.exec, 'failed');
    assert.ok(
      waiting.reconnect_seconds > 0 && waiting.reconnect_seconds <= 5,
      `reconnect in ${waiting.reconnect_seconds} s`,
    );
    assert.equal((await getReport(server, 'missing')).history.length, 0, 'no second run yet');
    clock.advance(5000);
    await reconnectPending(server, 'missing', 2);
    clock.advance(delaySeconds * 1000);
    const report = await afterTwoReconnects(server, clock, 'missing', delaySeconds * 1000);
    assertRunsApart(report, delaySeconds);
    assert.ok(report.history.every((run) => run.exit_state === 'failed'));
    assert.ok(
      report.history.some((run) => run.log.some(([, line]) => line.includes('No such file or directory'))),
    );
    await ok(server, 'PUT', '/process/missing/command', { command: 'stop' });
    const stopped = await getState(server, 'missing');
    assert.deepEqual([stopped.order, stopped.reconnect_seconds], ['stop', -1]);
    await ok(server, 'DELETE', '/process/missing');
  });

  it('backs off at least a second in a crash loop with delay 0', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('crashloop', {
        input: [{ id: 'in', address: '{diskfs}/nothing-here.mp4' }],
        reconnect: true,
        reconnect_delay_seconds: 0,
        autostart: true,
      }),
    );
    const report = await afterTwoReconnects(server, clock, 'crashloop', 1000);
    await ok(server, 'DELETE', '/process/crashloop');
    // A busy loop would start many runs in one second (of the clock the timers run on).
    assertRunsApart(report, 1);
  });

  it('stops a stale process (input accepts and sends nothing) without changing its order', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      await ok(
        server,
        'POST',
        '/process',
        lavfiProcess('stale', {
          input: [{ id: 'in', address: `tcp://127.0.0.1:${port}`, options: ['-f', 'mpegts'] }],
          stale_timeout_seconds: 2,
          reconnect: true,
          reconnect_delay_seconds: 1,
          autostart: true,
        }),
      );
      const first = await waitForState(server, 'stale', 'running');
      await waitFor(() => Promise.resolve(sockets.size > 0), 10_000, 'ffmpeg to connect');
      // Stopped for being stale with the order kept, then started again by reconnect: a second
      // child connects.
      clock.advance(2000);
      await waitFor(
        async () => (await getReport(server, 'stale')).history.length > 0,
        10_000,
        'the stale run to end',
      );
      clock.advance(1000);
      await waitFor(() => Promise.resolve(sockets.size > 1), 15_000, 'a second connection after reconnect');
      const again = await waitForState(server, 'stale', 'running');
      assert.equal(again.order, 'start');
      assert.notEqual(again.pid, first.pid);
      assert.equal(isAlive(first.pid), false);
      const report = await getReport(server, 'stale');
      const staleRun = report.history.at(-1) as ProcessReport['history'][number];
      assert.ok(
        staleRun.log.some(([, line]) => line.includes('no progress for 2 s')),
        JSON.stringify(report.history),
      );
      assert.ok(staleRun.log.some(([, line]) => line.includes('streamcore: stopped (stale)')));
      await ok(server, 'DELETE', '/process/stale');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('stops a child whose log pipe is paused by the output budget without SIGKILL', async () => {
    // ffmpeg at -loglevel trace with -debug_ts writes tens of MB per second to stderr: the pipe
    // is read 1 MiB per second and paused for the rest, so ffmpeg blocks on its writes.
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('chatty', {
        input: [{ id: 'in', address: 'testsrc=size=32x24:rate=1000', options: ['-f', 'lavfi'] }],
        options: ['-loglevel', 'trace', '-debug_ts'],
        autostart: true,
      }),
    );
    await waitForState(server, 'chatty', 'running');
    // Time for ffmpeg to fill its log pipe and block on it (the budget pauses the pipe within each
    // second); nothing the server shows marks the pause, so this wait stays.
    await sleep(1500);
    const started = Date.now();
    await ok(server, 'PUT', '/process/chatty/command', { command: 'stop' });
    const elapsed = Date.now() - started;
    const state = await getState(server, 'chatty');
    assert.equal(state.exec, 'finished', `ended ${state.exec} after ${elapsed} ms`);
    assert.ok(elapsed < 2500, `stop took ${elapsed} ms`);
    const report = await getReport(server, 'chatty');
    assert.ok(!report.log.some(([, line]) => line.includes('sending SIGKILL')));
    await ok(server, 'DELETE', '/process/chatty');
  });

  it('stops a process whose memory stays above its limit for waitfor_seconds, then reconnects', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('memory', {
        limits: { memory_mbytes: 1, waitfor_seconds: 3 },
        reconnect: true,
        reconnect_delay_seconds: 1,
        autostart: true,
      }),
    );
    const first = await waitForState(server, 'memory', 'running');
    // ffmpeg's resident memory is above 1 MiB from its first sample on: a tick samples it, and
    // the tick waitfor_seconds later stops it.
    const limitNote = /memory \d+ bytes above the limit of 1048576 bytes for 3 s/;
    clock.advance(1000);
    clock.advance(3000);
    await waitFor(
      async () => {
        const current = await getReport(server, 'memory');
        return [current, ...current.history].some((run) => run.log.some(([, line]) => limitNote.test(line)));
      },
      15_000,
      'the memory limit to stop the process',
    );
    await waitFor(
      async () => (await getReport(server, 'memory')).history.length > 0,
      10_000,
      'the stopped run to end',
    );
    clock.advance(1000);
    // The order is kept, so reconnect applies: a new child runs.
    const again = await waitFor(
      async () => {
        const state = await getState(server, 'memory');
        return state.exec === 'running' && state.pid !== first.pid ? state : undefined;
      },
      10_000,
      'a reconnect after the limit stop',
    );
    assert.equal(again.order, 'start');
    const stoppedRun = (await getReport(server, 'memory')).history[0] as ProcessReport['history'][number];
    assert.ok(['finished', 'killed'].includes(stoppedRun.exit_state), stoppedRun.exit_state);
    assert.ok(stoppedRun.log.some(([, line]) => limitNote.test(line)));
    // Unix seconds: spawn and exit at least waitfor_seconds apart (a stop at the first sample
    // above the limit would be at most 2 s apart).
    assert.ok(
      stoppedRun.exited_at - stoppedRun.created_at >= 3,
      `ran ${stoppedRun.exited_at - stoppedRun.created_at} s before the limit stopped it`,
    );
    await ok(server, 'DELETE', '/process/memory');
  });
});

describe('a child that ignores SIGINT', () => {
  const clock = new TestClock();
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { ffmpeg: { binary: join(FFMPEG_FIXTURES, 'ignore-sigint.sh') } },
      now: clock.now,
      schedule: clock.schedule,
    });
  });
  after(() => server.close());

  it('gets SIGKILL 5 s after SIGINT and ends killed', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('stubborn', { autostart: true }));
    const running = await waitForState(server, 'stubborn', 'running');
    await waitFor(
      async () => (await getReport(server, 'stubborn')).log.length > 0,
      5000,
      'the stand-in to start',
    );
    const started = clock.now();
    const stopped = ok(server, 'PUT', '/process/stubborn/command', { command: 'stop' });
    await waitForState(server, 'stubborn', 'finishing');
    // Two seconds short of the 5 s, the child has had SIGINT only.
    clock.advance(3000);
    assert.equal((await getState(server, 'stubborn')).exec, 'finishing');
    assert.ok(
      !(await getReport(server, 'stubborn')).log.some(([, line]) => line.includes('sending SIGKILL')),
    );
    clock.advance(2000);
    await stopped;
    const elapsed = clock.now() - started;
    assert.ok(elapsed >= 5000, `stop took ${elapsed} ms`);
    const state = await getState(server, 'stubborn');
    assert.deepEqual([state.exec, state.order], ['killed', 'stop']);
    assert.equal(isAlive(running.pid), false);
    const report = await getReport(server, 'stubborn');
    assert.ok(report.log.some(([, line]) => line.includes('sending SIGKILL')));
  });
});

describe('a binary that cannot be spawned', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { ffmpeg: { binary: '/nonexistent/ffmpeg' } } });
  });
  after(() => server.close());

  it('leaves the process failed with the reason in the log', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('nobinary', { autostart: true }));
    const state = await waitForState(server, 'nobinary', 'failed');
    assert.match(state.last_logline, /ENOENT/);
  });
});

describe('isolation: one child flooding its output', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { ffmpeg: { binary: join(FFMPEG_FIXTURES, 'flood.sh') } } });
  });
  after(() => server.close());

  it('does not slow down the others or the server, and its lines are cut', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('flood', {
        // The word the stand-in binary looks for; a text option, as a bare token would be an output.
        options: ['-metadata', 'title=flood'],
        autostart: true,
      }),
    );
    await ok(server, 'POST', '/process', lavfiProcess('calm', { autostart: true }));
    await waitForState(server, 'calm', 'running', 15_000, 1);
    // A period in which nothing may go wrong: the flood goes on while the server and the calm
    // process are watched after it; no event marks its end, so this one wait stays.
    await sleep(4000);
    const started = Date.now();
    const ping = await fetch(`${server.url}/ping`);
    assert.equal(ping.status, 200);
    assert.ok(Date.now() - started < 1000, 'the server answers promptly');
    const calm = await getState(server, 'calm');
    assert.equal(calm.exec, 'running');
    assert.ok(calm.progress.fps > 7 && calm.progress.fps < 13, `calm runs at ${calm.progress.fps} fps`);
    const flood = await getReport(server, 'flood');
    assert.ok(flood.log.length > 0);
    assert.ok(
      flood.log.every(([, line]) => line.length <= 8192 + 20),
      'huge lines are cut',
    );
    assert.equal((await getState(server, 'flood')).exec, 'running');
  });
});
