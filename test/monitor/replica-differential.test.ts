import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultConfig } from '../../src/config/index.js';
import { MetricReplica, ReplicaFeed } from '../../src/monitor/index.js';
import { MetricsQueryService, QueryError } from '../../src/monitor/query/index.js';
import {
  commitRandomSnapshot,
  LIMITS,
  randomQuery,
  randomSeriesPool,
  scenario,
  type Scenario,
} from '../helpers/random-queries.js';

/**
 * An API worker answers metric queries from its replica of the store (monitor/replica.ts), fed
 * with the main store's snapshots. The replica must give the main store's bytes for any query: a
 * replica that followed from the first snapshot, and one that started late from the backlog, on
 * random stores whose series appear, expire and get their ids reused.
 */

function replicaOf(s: Scenario): MetricReplica {
  const config = defaultConfig();
  config.metrics.enable = true;
  config.metrics.interval_sec = s.retention.intervalSec;
  config.metrics.range_sec = s.retention.rangeSec;
  const replica = new MetricReplica(config);
  assert.equal(replica.store.capacity, s.store.capacity);
  return replica;
}

async function answerOf(service: MetricsQueryService, body: unknown): Promise<string> {
  try {
    return (await service.answer(body)).bytes.toString('utf8');
  } catch (error) {
    assert.ok(error instanceof QueryError);
    return `QueryError ${JSON.stringify(error.details)}`;
  }
}

describe('metrics replica: the main store against its replicas', () => {
  it('gives the same bytes for random queries, from the first snapshot and from a backlog', async () => {
    let compared = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const s = scenario(seed);
      const feed = new ReplicaFeed(s.store);
      const early = replicaOf(s);
      const earlyService = new MetricsQueryService(early.store, s.retention, LIMITS);
      let late: { replica: MetricReplica; service: MetricsQueryService } | undefined;
      let pool = randomSeriesPool(s);
      let timeMs = 1_700_000_000_000;
      const ticks = 5 + Math.floor(s.random() * 3 * s.store.capacity);
      for (let tick = 0; tick < ticks; tick++) {
        timeMs += s.retention.intervalSec * 1000 * s.pick([1, 1, 2]) + s.pick([0, 250, -400]);
        if (s.random() < 0.2) pool = [...pool.filter(() => s.random() < 0.5), ...randomSeriesPool(s)];
        const batch = commitRandomSnapshot(s, timeMs, pool);
        const message = feed.snapshot(timeMs, batch);
        early.apply(message);
        late?.replica.apply(message);
        if (late === undefined && tick === Math.floor(ticks / 2)) {
          const replica = replicaOf(s);
          for (const backlog of feed.backlog()) replica.apply(backlog);
          late = { replica, service: new MetricsQueryService(replica.store, s.retention, LIMITS) };
        }
        for (let q = 0; q < 10; q++) {
          const body = randomQuery(s);
          const expected = await answerOf(s.service, body);
          const context = `seed ${seed}, tick ${tick}: ${JSON.stringify(body)}`;
          assert.equal(await answerOf(earlyService, body), expected, `${context} (replica from the start)`);
          if (late !== undefined)
            assert.equal(await answerOf(late.service, body), expected, `${context} (replica from a backlog)`);
          compared++;
        }
      }
    }
    assert.ok(compared >= 400, `compared ${compared} queries`);
  });
});
