import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMetricsQuery, QueryError } from '../../src/monitor/query/index.js';
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
 * The server answers queries from encoded fragments (assemble-answer.ts); the plain evaluation
 * (support/plain-evaluation.ts) formats every point for every answer. Both must give the same bytes: thousands of
 * random queries against random stores whose series appear, disappear and get their ids reused,
 * with snapshots late, early or missing, from the first snapshot on.
 */

/** The plain evaluation of a body, on its own pattern cache. */
async function reference(s: Scenario, body: unknown, patterns: PatternCache): Promise<string> {
  const query = parseMetricsQuery(body, LIMITS, patterns);
  return await evaluatePlainly(s.store, s.retention, query);
}

async function compare(s: Scenario, body: unknown, patterns: PatternCache, context: string): Promise<void> {
  let expected: string;
  try {
    expected = await reference(s, body, patterns);
  } catch (error) {
    assert.ok(error instanceof QueryError, `${context}: only QueryError`);
    await assert.rejects(() => s.service.answer(body), QueryError, context);
    return;
  }
  assert.equal(
    (await s.service.answer(body, JSON.stringify(body))).bytes.toString('utf8'),
    expected,
    context,
  );
}

describe('metrics query: fragments against the plain evaluation', () => {
  it('gives the same bytes for thousands of random queries on random stores', async () => {
    let compared = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const s = scenario(seed);
      const patterns = new PatternCache(LIMITS.maxProgramSize);
      let pool = randomSeriesPool(s);
      let timeMs = 1_700_000_000_000 + Math.floor(s.random() * 1000);
      // Before the first snapshot, too.
      await compare(s, randomQuery(s), patterns, `seed ${seed}, empty store`);
      const ticks = 5 + Math.floor(s.random() * 3 * s.store.capacity);
      for (let tick = 0; tick < ticks; tick++) {
        // Late, early, same-second or missed snapshots.
        timeMs +=
          s.retention.intervalSec * 1000 * s.pick([1, 1, 1, 2, 3]) + s.pick([0, 0, 250, -400, 999, 1500]);
        // Series churn: sometimes a new pool, so old series expire and their ids are reused.
        if (s.random() < 0.15) pool = [...pool.filter(() => s.random() < 0.5), ...randomSeriesPool(s)];
        commitRandomSnapshot(s, timeMs, pool);
        for (let q = 0; q < 12; q++) {
          const body = randomQuery(s);
          await compare(s, body, patterns, `seed ${seed}, tick ${tick}: ${JSON.stringify(body)}`);
          compared++;
        }
      }
    }
    assert.ok(compared >= 3000, `compared ${compared} queries`);
  });

  it('gives the same bytes when varied queries recombine the same label selections within a snapshot', async () => {
    // Blocks of the series one pattern selects are kept per snapshot (series-fragments.ts): few
    // (metric, label, pattern) choices, recombined in random orders, make later queries of a
    // snapshot reuse blocks that earlier ones made, in latest-value and series modes.
    let compared = 0;
    for (let seed = 101; seed <= 110; seed++) {
      const s = scenario(seed);
      const patterns = new PatternCache(LIMITS.maxProgramSize);
      const pool = randomSeriesPool(s);
      // Few metrics, labels and patterns, so that one pattern meets several labels of a metric.
      const choices = Array.from({ length: 8 }, () => ({
        name: s.pick(['net_rx', 'restream_process', 'restream_state']),
        labels: {
          [s.pick(['interface', 'processid', 'state', 'nolabel'])]: s.pick(['', 'o', '.', '^eth', 'cam1']),
        },
      }));
      for (let tick = 0; tick < s.store.capacity + 2; tick++) {
        commitRandomSnapshot(s, 1_700_000_000_000 + tick * s.retention.intervalSec * 1000, pool);
        for (let q = 0; q < 16; q++) {
          const items = choices.filter(() => s.random() < 0.5).sort(() => s.random() - 0.5);
          const body: Record<string, unknown> = { metrics: items };
          if (q % 2 === 1) body.timerange_sec = s.retention.rangeSec;
          await compare(s, body, patterns, `seed ${seed}, tick ${tick}: ${JSON.stringify(body)}`);
          compared++;
        }
      }
    }
    assert.ok(compared >= 500, `compared ${compared} queries`);
  });

  it('gives the same bytes for steps past those kept per snapshot (encoded for one answer)', async () => {
    // Past 4 steps in a snapshot, a step's values are encoded over the query's own points and not
    // kept (series-fragments.ts); its blocks still are, named by step and number of points, so a
    // later query of that step and length (kept step or not) may reuse them.
    let compared = 0;
    for (let seed = 7; seed <= 9; seed++) {
      const s = scenario(seed);
      const patterns = new PatternCache(LIMITS.maxProgramSize);
      const pool = randomSeriesPool(s).map((series) => ({ ...series, p: 1 }));
      for (let tick = 0; tick < s.store.capacity + 3; tick++) {
        commitRandomSnapshot(s, 1_700_000_000_000 + tick * s.retention.intervalSec * 1000, pool);
        for (let q = 0; q < 24; q++) {
          const body = randomQuery(s);
          body.interval_sec = 1 + Math.floor(s.random() * 9);
          body.timerange_sec = s.pick([
            s.retention.rangeSec,
            1 + Math.floor(s.random() * s.retention.rangeSec),
          ]);
          await compare(s, body, patterns, `seed ${seed}, tick ${tick}: ${JSON.stringify(body)}`);
          compared++;
        }
      }
    }
    assert.ok(compared >= 200, `compared ${compared} queries`);
  });
});
