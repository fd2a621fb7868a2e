import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MetricStore } from '../../src/monitor/store/index.js';
import { startServer } from '../helpers/server.js';
import {
  cpuIdleAt,
  cpuIdleMinutesOverHttp,
  feedMinutes,
  HISTORY_MINUTES,
  HISTORY_T0,
  pointsOfTier,
  windowFiles,
  writeKnownHistory,
} from './support/damaged-history.js';
import { openHistory, recordingLogger } from './support/history.js';

/**
 * Damaged history files (issue 24, item 8; docs/history.md, Damage): the server never stops for
 * them, and only what is damaged is lost.
 */

const T0_SEC = HISTORY_T0 / 1000;
const CPU = 'cpu_idle';

/** The minutes (from `HISTORY_T0`) whose cpu_idle point the minute tier answers with its right value. */
function answeredMinutes(points: Map<string, Map<number, number>>): Set<number> {
  const minutes = new Set<number>();
  for (const [timeSec, value] of points.get(CPU) ?? []) {
    const minute = (timeSec - T0_SEC) / 60;
    if (value === cpuIdleAt(minute)) minutes.add(minute);
  }
  return minutes;
}

/** The minutes of `[from, to)` missing from `answered`. */
function missing(answered: Set<number>, from: number, to: number): number[] {
  const lost: number[] = [];
  for (let minute = from; minute < to; minute++) if (!answered.has(minute)) lost.push(minute);
  return lost;
}

/**
 * A clock at real speed from `startMs`, 5 s into a minute: no minute ends while a server test
 * runs, so the history writes nothing (and logs nothing) the test did not ask for.
 */
function clockFrom(startMs: number): () => number {
  const realStart = Date.now();
  return () => startMs + (Date.now() - realStart);
}

/** The minute tier's write-ahead log under `dir`. */
function minuteLog(dir: string): string {
  const name = readdirSync(join(dir, 'minute')).find((entry) => entry.endsWith('.wal'));
  assert.ok(name !== undefined, 'the minute tier has an open window');
  return join(dir, 'minute', name);
}

/** The history's warnings and errors, as pino wrote them. */
function problems(lines: { msg: string; level?: number }[]): { msg: string; file?: string; dir?: string }[] {
  return lines.filter((line) => (line.level ?? 0) >= 40);
}

describe('damaged history files', () => {
  it('keeps the records before and after 16 bytes corrupted a quarter into a write-ahead log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-damage-'));
    try {
      await writeKnownHistory(dir);
      const log = minuteLog(dir);
      const { records } = windowFiles(dir).get(`minute/${log.split('/').at(-1)}`)!;
      const bytes = readFileSync(log);
      const at = Math.floor(bytes.length / 4);
      for (let i = at; i < at + 16; i++) bytes[i] = bytes[i]! ^ 0x5a;
      writeFileSync(log, bytes);
      const touched = [...records!].filter(([, [start, end]]) => start < at + 16 && end > at);
      assert.ok(touched.length >= 1 && touched.length <= 2);

      const { logger, lines } = recordingLogger();
      const history = await openHistory(dir, logger);
      const answered = answeredMinutes(await pointsOfTier(history, history.minute));
      await history.close();
      const lost = missing(answered, 0, HISTORY_MINUTES);
      assert.deepEqual(
        lost,
        touched.map(([stepSec]) => (stepSec - T0_SEC) / 60),
        'only the records the damage touched are lost',
      );
      const warned = problems(lines);
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.equal(warned[0]!.file, log);

      // The log was rewritten without the damage: the next start has nothing to say.
      const again = recordingLogger();
      const reopened = await openHistory(dir, again.logger);
      assert.deepEqual(
        missing(answeredMinutes(await pointsOfTier(reopened, reopened.minute)), 0, HISTORY_MINUTES),
        lost,
      );
      await reopened.close();
      assert.deepEqual(problems(again.lines), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the records before the cut and every one appended after a write-ahead log was truncated under the running history', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-damage-'));
    try {
      const store = new MetricStore(16);
      const history = await openHistory(dir);
      // 18 h 40 min: the minute tier's open window holds 40 minutes.
      const cut = 18 * 60 + 40;
      feedMinutes(history, store, 0, cut);
      await history.settled();
      const log = minuteLog(dir);
      const { records } = windowFiles(dir).get(`minute/${log.split('/').at(-1)}`)!;
      const keptBytes = Math.floor(readFileSync(log).length / 2) + 5;
      truncateSync(log, keptBytes);
      feedMinutes(history, store, cut, cut + 30);
      await history.close();

      const { logger, lines } = recordingLogger();
      const reopened = await openHistory(dir, logger);
      const answered = answeredMinutes(await pointsOfTier(reopened, reopened.minute));
      await reopened.close();
      // Lost: what the truncation took away (from the record it cut in two on); nothing before,
      // nothing appended after it.
      const cutAway = [...records!].filter(([, [, end]]) => end > keptBytes);
      assert.ok(cutAway.length > 1);
      assert.deepEqual(
        missing(answered, 0, cut + 30),
        cutAway.map(([stepSec]) => (stepSec - T0_SEC) / 60),
      );
      const warned = problems(lines);
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.equal(warned[0]!.file, log);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts the server over a directory named like a write-ahead log, with one warning naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-damage-'));
    try {
      const metricsDir = join(dir, 'db', 'metrics');
      await writeKnownHistory(metricsDir);
      const foreign = join(metricsDir, 'minute', `${T0_SEC - 6 * 3600}.wal`);
      mkdirSync(foreign);
      writeFileSync(join(foreign, 'inside'), 'not a log');
      const { logger, lines } = recordingLogger();
      const server = await startServer({
        dir,
        logger,
        now: clockFrom(HISTORY_T0 + (HISTORY_MINUTES * 60 + 5) * 1000),
        config: { metrics: { enable: true } },
      });
      try {
        const answered = await cpuIdleMinutesOverHttp(server.url);
        const lost: number[] = [];
        for (let minute = 0; minute < HISTORY_MINUTES; minute++)
          if (answered.get(T0_SEC + minute * 60) !== cpuIdleAt(minute)) lost.push(minute);
        assert.deepEqual(lost, [], 'every minute of the history is answered');
      } finally {
        await server.close();
      }
      const warned = problems(lines).filter((line) => line.msg.startsWith('metrics history'));
      assert.equal(warned.length, 1, JSON.stringify(warned));
      assert.equal(warned[0]!.file, foreign);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts the server without history when its directory is a file, with one error line per tier naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-damage-'));
    try {
      const notADirectory = join(dir, 'history-is-a-file');
      writeFileSync(notADirectory, 'not a directory');
      const { logger, lines } = recordingLogger();
      let linesBeforeClose = 0;
      const server = await startServer({
        dir,
        logger,
        now: clockFrom(HISTORY_T0 + 5000),
        config: { metrics: { enable: true, history: { dir: notADirectory } } },
      });
      try {
        // The raw window still answers.
        assert.ok((await cpuIdleMinutesOverHttp(server.url)).size > 0);
      } finally {
        // Before the shutdown's flush of the unfinished minute, which fails (logged once) too.
        linesBeforeClose = lines.length;
        await server.close();
      }
      const errors = problems(lines.slice(0, linesBeforeClose)).filter((line) =>
        line.msg.startsWith('metrics history'),
      );
      assert.deepEqual(
        errors.map((line) => line.dir),
        [join(notADirectory, 'minute'), join(notADirectory, 'hour')],
        JSON.stringify(errors),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
