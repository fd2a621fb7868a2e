import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MetricsQueryService, QueryError, QueryTimeoutError } from '../../src/monitor/query/index.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import {
  boundLabelValue,
  MAX_LABEL_VALUE_LENGTH,
  METRIC_INDEX,
  MetricStore,
} from '../../src/monitor/store/store.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { LIMITS } from '../helpers/query-limits.js';

/** Issue 10 item 5: a metrics query cannot freeze the server. */

function storeWithSeries(count: number): MetricStore {
  const store = new MetricStore(5);
  const restream = METRIC_INDEX.get('restream_process')!;
  const batch = new SampleBatch();
  for (let i = 0; i < count; i++)
    batch.add(store.intern(restream, [`process-${i}`, 'running', 'main', 'fps']), i);
  store.commit(1_000_000, batch);
  return store;
}

async function detailsOf(action: () => Promise<unknown>): Promise<string[]> {
  try {
    await action();
  } catch (error) {
    if (error instanceof QueryError || error instanceof QueryTimeoutError) return error.details;
    throw error;
  }
  assert.fail('expected the query to be refused');
}

describe('metrics query bounds', () => {
  it('refuses a pattern whose program would be too large before compiling it', async () => {
    const service = new MetricsQueryService(storeWithSeries(1), { rangeSec: 10, intervalSec: 2 }, LIMITS);
    // The attacker's pattern: 910 characters, 140 000 instructions, half a second to compile.
    const pattern = '(?:.{0,999}a)'.repeat(70);
    const details = await detailsOf(() =>
      service.answer({ metrics: [{ name: 'restream_process', labels: { processid: pattern } }] }),
    );
    assert.equal(details.length, 1);
    assert.match(details[0]!, /labels\.processid: pattern too large: it compiles to about \d+ instructions/);
    assert.match(details[0]!, /metrics\.query\.max_program_size/);
  });

  it('refuses patterns that are too large together, in characters and in instructions', async () => {
    const service = new MetricsQueryService(
      storeWithSeries(1),
      { rangeSec: 10, intervalSec: 2 },
      {
        ...LIMITS,
        maxTotalPatternLength: 2000,
        maxProgramSize: 5000,
      },
    );
    const long = Array.from({ length: 5 }, (_, i) => ({
      name: 'restream_process',
      labels: { processid: `${'x'.repeat(900)}${i}` },
    }));
    const byLength = await detailsOf(() => service.answer({ metrics: long }));
    assert.ok(
      byLength.some((detail) => /max_total_pattern_length/.test(detail)),
      byLength.join('\n'),
    );
    // Each pattern alone is allowed (about 1 800 instructions); three of them are not.
    const large = Array.from({ length: 4 }, (_, i) => ({
      name: 'restream_process',
      labels: { processid: `[a-z]{0,${900 + i}}` },
    }));
    const bySize = await detailsOf(() => service.answer({ metrics: large }));
    assert.ok(
      bySize.some((detail) =>
        /compile to \d+ instructions or more, at most 5000 .*max_program_size/.test(detail),
      ),
      bySize.join('\n'),
    );
    // Once over a bound, the rest are not compiled at all.
    assert.ok(
      bySize.some((detail) => /not compiled/.test(detail)),
      bySize.join('\n'),
    );
  });

  it('answers QueryTimeoutError once the time budget is spent, checked between series', async () => {
    let clockMs = 0;
    // Every look at the clock advances it by 1 ms: deterministic, no real time involved.
    const clock = (): number => clockMs++;
    const store = storeWithSeries(1000);
    const service = new MetricsQueryService(
      store,
      { rangeSec: 10, intervalSec: 2 },
      { ...LIMITS, maxTimeMs: 5 },
      clock,
    );
    const details = await detailsOf(() =>
      service.answer({ metrics: [{ name: 'restream_process', labels: { processid: '7' } }] }),
    );
    assert.match(details[0]!, /time budget of 5 ms \(metrics\.query\.max_time_ms\)/);
    // The same query with a budget it can meet answers.
    const roomy = new MetricsQueryService(
      store,
      { rangeSec: 10, intervalSec: 2 },
      { ...LIMITS, maxTimeMs: 1000 },
      clock,
    );
    const given = await roomy.answer({
      metrics: [{ name: 'restream_process', labels: { processid: '^process-7$' } }],
    });
    const answer = JSON.parse(given.bytes.toString()) as { metrics: unknown[] };
    assert.equal(answer.metrics.length, 1);
  });

  it('cuts label values longer than the bound, keeping long values with a common prefix apart', () => {
    const store = new MetricStore(5);
    const metric = METRIC_INDEX.get('restream_process_states')!;
    const prefix = 'p'.repeat(1000);
    const a = store.intern(metric, [`${prefix}a`, 'running']);
    const b = store.intern(metric, [`${prefix}b`, 'running']);
    assert.notEqual(a, b);
    for (const id of [a, b]) assert.ok(store.labelsOf(id)[0]!.length <= MAX_LABEL_VALUE_LENGTH);
    assert.equal(
      store.intern(metric, [`${prefix}a`, 'running']),
      a,
      'the same long value is the same series',
    );
    assert.equal(boundLabelValue('short'), 'short');
    // A surrogate pair at the cut stays whole.
    const emoji = boundLabelValue(`${'x'.repeat(239)}😀${'y'.repeat(100)}`);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(emoji), 'no lone high surrogate');
  });
});

describe('metrics query bounds over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      // A budget the loaded test machine cannot spend: this test is about the size bounds.
      config: { metrics: { enable: true, interval_sec: 1, range_sec: 10, query: { max_time_ms: 60_000 } } },
    });
  });
  after(() => server.close());

  it('answers 400 naming the bound, and the server keeps answering', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        metrics: Array.from({ length: 12 }, (_, i) => ({
          name: 'restream_process',
          labels: { processid: `${'(?:.{0,999}a)'.repeat(70)}${i}` },
        })),
      }),
    });
    assert.equal(response.status, 400);
    const envelope = (await response.json()) as { code: number; details: string[] };
    assert.equal(envelope.code, 400);
    assert.ok(
      envelope.details.every((detail) =>
        /max_program_size|max_total_pattern_length|not compiled/.test(detail),
      ),
    );
    const ping = await fetch(`${server.url}/ping`);
    assert.equal(ping.status, 200);
  });
});
