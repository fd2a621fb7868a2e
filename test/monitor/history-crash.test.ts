import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { MetricHistory, pointsBetween } from '../../src/monitor/history/index.js';
import { readWindowLog } from '../../src/monitor/history/window-log.js';
import { startMain } from '../helpers/main-process.js';

const FAST_MAIN = join(import.meta.dirname, '..', 'helpers', 'fast-clock-main.ts');
const T0 = Date.UTC(2026, 0, 5);

/** The minute tier's open log under `dir` (one 6-hour window: the test stays inside it). */
function minuteLog(dir: string): string | undefined {
  const minuteDir = join(dir, 'db', 'metrics', 'minute');
  let names: string[];
  try {
    names = readdirSync(minuteDir);
  } catch {
    return undefined;
  }
  const wal = names.find((name) => name.endsWith('.wal'));
  return wal === undefined ? undefined : join(minuteDir, wal);
}

/** Steps in the log so far (read only: the server may be appending). */
function loggedSteps(dir: string): number[] {
  const path = minuteLog(dir);
  if (path === undefined) return [];
  const window = { startSec: Number(/(\d+)\.wal$/.exec(path)![1]), stepSec: 60, windowSec: 6 * 3600 };
  return readWindowLog(path, window).steps.map((step) => step.stepSec);
}

/** Polls until the minute log holds more than `count` steps; the server's clock runs 60× fast. */
async function untilLogged(dir: string, count: number): Promise<number[]> {
  for (let i = 0; i < 600; i++) {
    const steps = loggedSteps(dir);
    if (steps.length > count) return steps;
    await sleep(100);
  }
  throw new Error(`the minute log never got more than ${count} steps`);
}

function start(dir: string, clockStartMs: number) {
  return startMain(
    {
      CORE_ADDRESS: '127.0.0.1:0',
      CORE_API_AUTH_ENABLE: 'false',
      CORE_DB_DIR: join(dir, 'db'),
      CORE_STORAGE_DISK_DIR: join(dir, 'data'),
      CORE_METRICS_ENABLE: 'true',
      CORE_METRICS_INTERVAL_SECONDS: '1',
      CORE_METRICS_RANGE_SECONDS: '60',
      STREAMCORE_TEST_CLOCK_START_MS: String(clockStartMs),
      STREAMCORE_TEST_CLOCK_SPEED: '60',
    },
    dir,
    FAST_MAIN,
  );
}

async function kill(run: ReturnType<typeof startMain>): Promise<string> {
  run.child.kill('SIGKILL');
  const exit = await run.exited;
  assert.equal(exit.signal, 'SIGKILL');
  return exit.stdout;
}

describe('metrics history across kill -9 (server in a child process)', () => {
  it('keeps every minute flushed before the kill, and skips a torn record with one log line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-crash-'));
    try {
      const first = start(dir, T0);
      await first.listening;
      const beforeKill = await untilLogged(dir, 3);
      await kill(first);
      const flushed = loggedSteps(dir);
      assert.ok(flushed.length >= beforeKill.length);

      // A restart an hour later (same 6-hour window): the log goes on where it was.
      const second = start(dir, T0 + 3_600_000);
      await second.listening;
      await untilLogged(dir, flushed.length + 1);
      await kill(second);

      // Half a record at the end of the log, as a write cut short by a crash leaves it.
      appendFileSync(minuteLog(dir)!, Buffer.from([0x40, 0, 0, 0, 1, 2, 3, 4, 9, 9]));
      const third = start(dir, T0 + 7_200_000);
      await third.listening;
      const stdout = await kill(third);
      const torn = stdout.split('\n').filter((line) => line.includes('damaged bytes in the write-ahead log'));
      assert.equal(torn.length, 1, stdout);
      assert.match(torn[0]!, /\.wal"/);

      const history = new MetricHistory({
        dir: join(dir, 'db', 'metrics'),
        minuteRetentionDays: 7,
        hourRetentionDays: 400,
        maxSizeBytes: 0,
        logger: pino({ level: 'silent' }),
      });
      await history.load();
      const uptime = await history.read(
        history.minute,
        (s) => s.key === 'uptime_uptime',
        0,
        T0 / 1000 + 86_400,
      );
      const times = new Set(
        pointsBetween(uptime.get('uptime_uptime')!.pieces, 0, T0 / 1000 + 86_400).timesSec,
      );
      for (const step of flushed)
        assert.ok(times.has(step), `minute ${step} flushed before the kill is kept`);
      assert.ok(
        [...times].some((time) => time >= T0 / 1000 + 3600),
        'the restarted server added minutes',
      );
      await history.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
