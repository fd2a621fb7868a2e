import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatNumber, MetricsQueryService, QueryError } from '../../src/monitor/query/index.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { LIMITS } from '../helpers/query-limits.js';

interface Answer {
  timerange_sec: number;
  interval_sec: number;
  metrics: { name: string; labels: Record<string, string>; values: [number, number][] }[];
}

/**
 * A store with snapshots at 100, 102, 104, 107.5 and 108.9 s (the fourth one late):
 * net_rx{lo} = 1…5, net_rx{eth0} missing in the third snapshot, cpu_idle = 10.5 at the end only.
 */
function fixtureStore(): MetricStore {
  const store = new MetricStore(10);
  const netRx = METRIC_INDEX.get('net_rx')!;
  const cpuIdle = METRIC_INDEX.get('cpu_idle')!;
  const times = [100_000, 102_000, 104_000, 107_500, 108_900];
  times.forEach((timeMs, index) => {
    const batch = new SampleBatch();
    batch.add(store.intern(netRx, ['lo']), index + 1);
    if (index !== 2) batch.add(store.intern(netRx, ['eth0']), 100 * (index + 1));
    if (index === 4) batch.add(store.intern(cpuIdle, []), 10.5);
    store.commit(timeMs, batch);
  });
  return store;
}

async function ask(service: MetricsQueryService, body: unknown): Promise<Answer> {
  return JSON.parse((await service.answer(body)).bytes.toString()) as Answer;
}

function valuesOf(answer: Answer, name: string, label?: string): [number, number][] | undefined {
  return answer.metrics.find(
    (series) => series.name === name && (label === undefined || Object.values(series.labels)[0] === label),
  )?.values;
}

describe('metrics query evaluation', () => {
  const service = new MetricsQueryService(fixtureStore(), { rangeSec: 20, intervalSec: 2 }, LIMITS);

  it('answers the latest value of every matching series with the newest snapshot time', async () => {
    const answer = await ask(service, { metrics: [{ name: 'net_rx' }, { name: 'cpu_idle' }] });
    assert.equal(answer.timerange_sec, 20);
    assert.equal(answer.interval_sec, 2);
    assert.deepEqual(answer.metrics, [
      { name: 'cpu_idle', labels: {}, values: [[108, 10.5]] },
      { name: 'net_rx', labels: { interface: 'eth0' }, values: [[108, 500]] },
      { name: 'net_rx', labels: { interface: 'lo' }, values: [[108, 5]] },
    ]);
  });

  it('ignores interval_sec without timerange_sec, and answers [] for no items', async () => {
    assert.deepEqual((await ask(service, { interval_sec: 5, metrics: [{ name: 'cpu_idle' }] })).metrics, [
      { name: 'cpu_idle', labels: {}, values: [[108, 10.5]] },
    ]);
    assert.deepEqual((await ask(service, { metrics: [] })).metrics, []);
    assert.deepEqual((await ask(service, {})).metrics, []);
  });

  it('samples and holds: each point takes the newest snapshot at or before it', async () => {
    // n = floor(10 / 2) = 5 points at 100, 102, 104, 106, 108; 106 holds the snapshot of 104.
    const answer = await ask(service, { timerange_sec: 10, interval_sec: 2, metrics: [{ name: 'net_rx' }] });
    assert.deepEqual(valuesOf(answer, 'net_rx', 'lo'), [
      [100, 1],
      [102, 2],
      [104, 3],
      [106, 3],
      [108, 5],
    ]);
    // eth0 had no sample in the snapshot of 104, so both points that read it are left out.
    assert.deepEqual(valuesOf(answer, 'net_rx', 'eth0'), [
      [100, 100],
      [102, 200],
      [108, 500],
    ]);
  });

  it('spaces points by the requested interval, ending at the newest snapshot', async () => {
    // n = floor(10 / 3) = 3 points at 102, 105, 108.
    const answer = await ask(service, {
      timerange_sec: 10,
      interval_sec: 3,
      metrics: [{ name: 'net_rx', labels: { interface: 'lo' } }],
    });
    assert.deepEqual(valuesOf(answer, 'net_rx', 'lo'), [
      [102, 2],
      [105, 3],
      [108, 5],
    ]);
  });

  it('defaults the interval to the collection interval and caps the range at the retention', async () => {
    // T = 100 > range 20: n = 10 points from 90 to 108; those before the oldest snapshot (100) are left out.
    const answer = await ask(service, {
      timerange_sec: 100,
      metrics: [{ name: 'net_rx', labels: { interface: 'lo' } }],
    });
    assert.deepEqual(valuesOf(answer, 'net_rx', 'lo'), [
      [100, 1],
      [102, 2],
      [104, 3],
      [106, 3],
      [108, 5],
    ]);
  });

  it('answers one point (the latest) when the interval exceeds the range', async () => {
    const answer = await ask(service, {
      timerange_sec: 1,
      interval_sec: 5,
      metrics: [{ name: 'net_rx', labels: { interface: 'lo' } }],
    });
    assert.deepEqual(valuesOf(answer, 'net_rx', 'lo'), [[108, 5]]);
  });

  it('leaves out a series without any point in the window', async () => {
    // cpu_idle only exists in the newest snapshot; a window of points before it has nothing.
    const answer = await ask(service, { timerange_sec: 4, interval_sec: 2, metrics: [{ name: 'cpu_idle' }] });
    assert.deepEqual(valuesOf(answer, 'cpu_idle'), [[108, 10.5]]);
    const none = await ask(service, { timerange_sec: 20, interval_sec: 2, metrics: [{ name: 'cpu_ncpu' }] });
    assert.deepEqual(none.metrics, []);
  });

  it('answers every series for a time-series query with an empty metrics list', async () => {
    const answer = await ask(service, { timerange_sec: 2, interval_sec: 2, metrics: [] });
    assert.deepEqual(
      answer.metrics.map((series) => [series.name, series.labels]),
      [
        ['cpu_idle', {}],
        ['net_rx', { interface: 'eth0' }],
        ['net_rx', { interface: 'lo' }],
      ],
    );
  });

  it('keeps the answer to a body text asked twice while the snapshot is unchanged, and not after a commit', async () => {
    const store = fixtureStore();
    const cached = new MetricsQueryService(store, { rangeSec: 20, intervalSec: 2 }, LIMITS);
    const body = { metrics: [{ name: 'net_rx', labels: { interface: 'lo' } }] };
    const text = JSON.stringify(body);
    assert.equal(cached.cachedAnswer(text), undefined);
    await cached.answer(body, text);
    assert.equal(cached.cachedAnswer(text), undefined, 'a text asked once is not kept');
    const second = await cached.answer(body, text);
    assert.equal(cached.cachedAnswer(text), second, 'the answer to its second request is');
    const batch = new SampleBatch();
    batch.add(store.intern(METRIC_INDEX.get('net_rx')!, ['lo']), 6);
    store.commit(110_000, batch);
    assert.equal(cached.cachedAnswer(text), undefined, 'dropped with the snapshot');
    assert.deepEqual(
      valuesOf(JSON.parse((await cached.answer(body, text)).bytes.toString()) as Answer, 'net_rx', 'lo'),
      [[110, 6]],
    );
  });

  it('answers an empty list before the first snapshot', async () => {
    const empty = new MetricsQueryService(new MetricStore(5), { rangeSec: 10, intervalSec: 2 }, LIMITS);
    assert.equal(
      (await empty.answer({ metrics: [{ name: 'cpu_idle' }] })).bytes.toString(),
      '{"timerange_sec":10,"interval_sec":2,"metrics":[]}',
    );
  });

  it('answers the fixed disabled form without a store, after validating', async () => {
    const disabled = new MetricsQueryService(undefined, { rangeSec: 300, intervalSec: 2 }, LIMITS);
    assert.equal(
      (await disabled.answer({ metrics: [{ name: 'cpu_idle' }] })).bytes.toString(),
      '{"timerange_sec":0,"interval_sec":0,"metrics":[]}',
    );
    await assert.rejects(() => disabled.answer({ timerange_sec: -1 }), QueryError);
  });
});

describe('formatNumber', () => {
  it('writes integers without decimals and rounds others to 3 decimals', () => {
    assert.equal(formatNumber(117083), '117083');
    assert.equal(formatNumber(-1), '-1');
    assert.equal(formatNumber(11.0554), '11.055');
    assert.equal(formatNumber(0.1 + 0.2), '0.3');
    assert.equal(formatNumber(2.0005), '2.001');
    assert.equal(formatNumber(-0.0001), '0');
    assert.equal(formatNumber(-0), '0');
    assert.equal(formatNumber(1e21), '1e+21');
    assert.equal(formatNumber(1795314780.25), '1795314780.25');
    assert.doesNotThrow(() => JSON.parse(`[${formatNumber(123456789012.3456)}]`));
  });
});

describe('time-series bounds', () => {
  it('rejects more points per series than the bound, naming interval_sec', async () => {
    const store = new MetricStore(10);
    store.commit(1_000_000, new SampleBatch());
    const service = new MetricsQueryService(store, { rangeSec: 20_000, intervalSec: 2 }, LIMITS);
    await assert.doesNotReject(() => service.answer({ timerange_sec: 20_000, interval_sec: 2 }));
    await assert.rejects(
      () => service.answer({ timerange_sec: 20_000, interval_sec: 1 }),
      (error: unknown) =>
        error instanceof QueryError && /interval_sec: .* at most 10000/.test(error.details[0]!),
    );
  });
});
