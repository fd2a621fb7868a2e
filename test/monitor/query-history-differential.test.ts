import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { MetricHistory } from '../../src/monitor/history/index.js';
import { MetricsQueryService, parseMetricsQuery, QueryError } from '../../src/monitor/query/index.js';
import { PatternCache } from '../../src/monitor/query/pattern-cache.js';
import {
  commitRandomSnapshot,
  LIMITS,
  randomQuery,
  randomSeriesPool,
  scenario,
  type Scenario,
} from '../helpers/random-queries.js';
import { evaluatePlainly } from './support/plain-evaluation.js';

/**
 * Ranges past the raw window are answered with the history (docs/history.md#queries-which-tier-answers-which-range): the server
 * from lazily encoded history views (history-view.ts), the reference by formatting every point
 * (support/plain-evaluation.ts). Both must give the same bytes, for random stores fed into a real history
 * on disk across minutes, hours, sealed windows, expired files and restarts, with series that come
 * and go.
 */

const HOUR = 3600;
const DAY = 86_400;

interface HistoryScenario extends Scenario {
  history: MetricHistory;
  dir: string;
  minuteDays: number;
  hourDays: number;
}

async function openHistory(s: { dir: string; minuteDays: number; hourDays: number }): Promise<MetricHistory> {
  const history = new MetricHistory({
    dir: s.dir,
    minuteRetentionDays: s.minuteDays,
    hourRetentionDays: s.hourDays,
    maxSizeBytes: 0,
    logger: pino({ level: 'silent' }),
  });
  await history.load();
  return history;
}

async function historyScenario(seed: number): Promise<HistoryScenario> {
  const s = scenario(seed);
  const dir = mkdtempSync(join(tmpdir(), 'query-history-'));
  const minuteDays = 1;
  const hourDays = s.pick([2, 3, 12]);
  const history = await openHistory({ dir, minuteDays, hourDays });
  const service = new MetricsQueryService(s.store, s.retention, LIMITS, undefined, history);
  return { ...s, service, history, dir, minuteDays, hourDays };
}

/** A query of a random range, many of them past the raw window, some past every retention. */
function randomLongQuery(s: HistoryScenario): Record<string, unknown> {
  const body = randomQuery(s);
  if (s.random() < 0.8) {
    body.timerange_sec = s.pick([
      s.retention.rangeSec + 1,
      10 * 60,
      HOUR,
      5 * HOUR,
      DAY,
      s.minuteDays * DAY,
      s.minuteDays * DAY + 1,
      2 * DAY,
      s.hourDays * DAY,
      s.hourDays * DAY + 500,
      400 * DAY,
      Math.floor(s.random() * s.hourDays * DAY),
    ]);
    const interval = s.pick([undefined, undefined, 1, 7, 30, 60, 90, 300, 3600, 5400, 86_400]);
    if (interval !== undefined) body.interval_sec = interval;
  }
  return body;
}

async function reference(s: HistoryScenario, body: unknown, patterns: PatternCache): Promise<string> {
  const query = parseMetricsQuery(body, LIMITS, patterns);
  return evaluatePlainly(s.store, s.retention, query, s.history);
}

/** Compares one body; returns whether the answer holds a point older than the raw window. */
async function compare(
  s: HistoryScenario,
  body: unknown,
  patterns: PatternCache,
  context: string,
): Promise<boolean> {
  let expected: string;
  try {
    expected = await reference(s, body, patterns);
  } catch (error) {
    assert.ok(error instanceof QueryError, `${context}: only QueryError (${String(error)})`);
    await assert.rejects(() => s.service.answer(body), QueryError, context);
    return false;
  }
  const given = await s.service.answer(body, JSON.stringify(body));
  assert.equal(given.bytes.toString('utf8'), expected, context);
  if (s.store.snapshotCount === 0) return false;
  const oldestRawSec = Math.floor(s.store.timeMs(s.store.oldestSeq) / 1000);
  const answer = JSON.parse(expected) as { metrics: { values: [number, number][] }[] };
  return answer.metrics.some((series) => series.values.some(([time]) => time < oldestRawSec));
}

describe('metrics query past the raw window: history views against the plain evaluation', () => {
  it('gives the same bytes for random long ranges over a random history, across restarts', async () => {
    let compared = 0;
    let fromHistory = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const s = await historyScenario(seed);
      try {
        const patterns = new PatternCache(LIMITS.maxProgramSize);
        let pool = randomSeriesPool(s);
        let timeMs = Date.UTC(2026, 2, 1) + Math.floor(s.random() * 1000);
        await compare(s, randomLongQuery(s), patterns, `seed ${seed}, empty store`);
        for (let tick = 0; tick < 120; tick++) {
          // Collection ticks, with jumps that cross minutes, hours, 6-hour windows and days.
          const jumpSec = s.pick([
            s.retention.intervalSec,
            s.retention.intervalSec,
            45,
            61,
            600,
            HOUR,
            7 * HOUR,
          ]);
          timeMs += jumpSec * 1000 + s.pick([0, 250, -400, 999]);
          if (s.random() < 0.1) pool = [...pool.filter(() => s.random() < 0.5), ...randomSeriesPool(s)];
          const batch = commitRandomSnapshot(s, timeMs, pool);
          s.history.ingest(timeMs, batch, s.store);
          if (s.random() < 0.03) {
            // A restart: the history is read back from its files.
            await s.history.close();
            s.history = await openHistory(s);
            s.service = new MetricsQueryService(s.store, s.retention, LIMITS, undefined, s.history);
          }
          for (let q = 0; q < 3; q++) {
            const body = randomLongQuery(s);
            if (await compare(s, body, patterns, `seed ${seed}, tick ${tick}: ${JSON.stringify(body)}`))
              fromHistory++;
            compared++;
          }
        }
      } finally {
        await s.history.close();
        rmSync(s.dir, { recursive: true, force: true });
      }
    }
    assert.ok(compared >= 3500, `compared ${compared} queries`);
    assert.ok(fromHistory >= 800, `only ${fromHistory} answers held points from the history`);
  });

  it('gives the same bytes for steps past the views kept per snapshot (made for one answer)', async () => {
    const s = await historyScenario(5);
    try {
      const patterns = new PatternCache(LIMITS.maxProgramSize);
      const pool = randomSeriesPool(s).map((series) => ({ ...series, p: 1 }));
      let timeMs = Date.UTC(2026, 2, 1);
      for (let tick = 0; tick < 40; tick++) {
        timeMs += 10 * 60_000;
        s.history.ingest(timeMs, commitRandomSnapshot(s, timeMs, pool), s.store);
        for (const step of [60, 120, 180, 240, 300, 600, 3600, 7200]) {
          const body = randomQuery(s);
          body.timerange_sec = s.pick([DAY, 5 * HOUR, s.hourDays * DAY]);
          body.interval_sec = step;
          await compare(s, body, patterns, `tick ${tick}, step ${step}`);
        }
      }
    } finally {
      await s.history.close();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });

  it('keeps an answer the history helped make from its first request, one from the raw window from its second', async () => {
    const s = await historyScenario(3);
    try {
      const pool = randomSeriesPool(s).map((series) => ({ ...series, p: 1 }));
      let timeMs = Date.UTC(2026, 2, 1);
      for (let tick = 0; tick < 30; tick++) {
        timeMs += 10 * 60_000;
        s.history.ingest(timeMs, commitRandomSnapshot(s, timeMs, pool), s.store);
      }
      const long = { timerange_sec: DAY, metrics: [] };
      const longText = JSON.stringify(long);
      const first = await s.service.answer(long, longText);
      assert.equal(s.service.cachedAnswer(longText), first, 'kept at once');
      const raw = { timerange_sec: s.retention.rangeSec, metrics: [] };
      const rawText = JSON.stringify(raw);
      await s.service.answer(raw, rawText);
      assert.equal(s.service.cachedAnswer(rawText), undefined, 'asked once');
      const second = await s.service.answer(raw, rawText);
      assert.equal(s.service.cachedAnswer(rawText), second, 'asked twice');
    } finally {
      await s.history.close();
      rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
