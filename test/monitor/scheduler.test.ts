import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Collector } from '../../src/monitor/collectors/collector.js';
import { CollectionScheduler } from '../../src/monitor/scheduler.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';

interface LogLine {
  level: number;
  msg: string;
  collector?: string;
  error?: string;
}

function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

/** net_rx{interface} values in the newest snapshot. */
function newestNetRx(store: MetricStore): Record<string, number> {
  const result: Record<string, number> = {};
  for (const id of store.seriesOf(METRIC_INDEX.get('net_rx')!)) {
    const value = store.value(id, store.newestSeq);
    if (!Number.isNaN(value)) result[store.labelsOf(id)[0]!] = value;
  }
  return result;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('CollectionScheduler', () => {
  it('collects right at start, without waiting for the first interval', async () => {
    const store = new MetricStore(10);
    const scheduler = new CollectionScheduler({
      collectors: [{ name: 'one', collect: (emit) => emit('net_rx', ['lo'], 1) }],
      store,
      intervalMs: 60_000,
      timeoutMs: 1000,
      now: Date.now,
      logger: pino({ level: 'silent' }),
    });
    scheduler.start();
    await until(() => store.snapshotCount === 1, 'the first snapshot');
    assert.deepEqual(newestNetRx(store), { lo: 1 });
    await scheduler.stop();
  });

  it('keeps the samples of the others when collectors throw, reject, time out or emit wrongly', async () => {
    const store = new MetricStore(10);
    const { logger, lines } = capturingLogger();
    let slowEmit: ((value: number) => void) | undefined;
    let releaseSlow: (() => void) | undefined;
    let calls = 0;
    const collectors: Collector[] = [
      { name: 'good', collect: (emit) => emit('net_rx', ['good'], ++calls) },
      {
        name: 'throws',
        collect(emit) {
          emit('net_rx', ['throws'], 1); // staged, then discarded with the rest of this collector's tick
          throw new Error('cannot read /proc/x');
        },
      },
      {
        name: 'rejects',
        async collect(emit) {
          await sleep(1);
          emit('net_rx', ['rejects'], 1);
          throw new Error('permission denied');
        },
      },
      {
        name: 'slow',
        collect(emit) {
          slowEmit = (value) => emit('net_rx', ['slow'], value);
          return new Promise<void>((resolve) => {
            releaseSlow = resolve;
          });
        },
      },
      { name: 'bad-labels', collect: (emit) => emit('net_rx', [], 1) },
      {
        name: 'blocks',
        collect(emit) {
          const until = performance.now() + 150;
          while (performance.now() < until); // blocks the event loop longer than the time-out
          emit('net_rx', ['blocks'], 1);
        },
      },
    ];
    const scheduler = new CollectionScheduler({
      collectors,
      store,
      intervalMs: 60_000,
      timeoutMs: 100,
      now: Date.now,
      logger,
    });

    await scheduler.collectNow();
    assert.equal(store.snapshotCount, 1);
    assert.deepEqual(newestNetRx(store), { good: 1 });

    // The slow collector's late sample is not taken into any snapshot.
    slowEmit?.(99);
    await scheduler.collectNow();
    assert.deepEqual(newestNetRx(store), { good: 2 });

    const stats = new Map(scheduler.stats().map((entry) => [entry.name, entry]));
    assert.equal(stats.get('good')!.successes, 2);
    assert.equal(stats.get('good')!.failures, 0);
    for (const name of ['throws', 'rejects', 'bad-labels', 'blocks']) {
      assert.equal(stats.get(name)!.failures, 2, name);
    }
    assert.match(stats.get('throws')!.lastError!, /cannot read/);
    assert.match(stats.get('rejects')!.lastError!, /permission denied/);
    assert.match(stats.get('bad-labels')!.lastError!, /net_rx has 1 labels, got 0/);
    assert.match(stats.get('blocks')!.lastError!, /took \d+ ms, the limit is 100 ms/);
    // Still running from the first tick: not called again, counted as skipped.
    assert.equal(stats.get('slow')!.failures, 1);
    assert.equal(stats.get('slow')!.skipped, 1);
    assert.match(stats.get('slow')!.lastError!, /did not finish within 100 ms/);

    // Logged once per failure streak, with the collector's name and the error.
    const warnings = lines.filter((line) => line.level === 40);
    assert.deepEqual(warnings.map((line) => line.collector).sort(), [
      'bad-labels',
      'blocks',
      'rejects',
      'slow',
      'throws',
    ]);
    assert.ok(warnings.every((line) => typeof line.error === 'string' && line.error !== ''));

    // Once the slow call has ended, the collector is called again (and times out again).
    releaseSlow?.();
    await sleep(10);
    await scheduler.collectNow();
    const slowStats = scheduler.stats().find((entry) => entry.name === 'slow')!;
    assert.equal(slowStats.skipped, 1);
    assert.equal(slowStats.failures, 2);
    releaseSlow?.();
    await scheduler.stop();
  });

  it('logs a recovery after a failure streak', async () => {
    const store = new MetricStore(10);
    const { logger, lines } = capturingLogger();
    let fail = true;
    const scheduler = new CollectionScheduler({
      collectors: [
        {
          name: 'flaky',
          collect(emit) {
            if (fail) throw new Error('flaky');
            emit('net_rx', ['flaky'], 1);
          },
        },
      ],
      store,
      intervalMs: 60_000,
      timeoutMs: 1000,
      now: Date.now,
      logger,
    });
    await scheduler.collectNow();
    await scheduler.collectNow();
    fail = false;
    await scheduler.collectNow();
    assert.deepEqual(newestNetRx(store), { flaky: 1 });
    assert.deepEqual(
      lines.map((line) => [line.level, line.collector]),
      [
        [40, 'flaky'],
        [30, 'flaky'],
      ],
    );
    assert.equal(scheduler.stats()[0]!.failures, 2);
  });

  it('collects every interval until stopped', async () => {
    const store = new MetricStore(100);
    const scheduler = new CollectionScheduler({
      collectors: [{ name: 'one', collect: (emit) => emit('net_rx', ['lo'], store.newestSeq) }],
      store,
      intervalMs: 20,
      timeoutMs: 15,
      now: Date.now,
      logger: pino({ level: 'silent' }),
    });
    scheduler.start();
    await until(() => store.snapshotCount >= 4, 'four snapshots');
    await scheduler.stop();
    const count = store.snapshotCount;
    await sleep(100);
    assert.equal(store.snapshotCount, count, 'no collection after stop');
    for (let seq = store.oldestSeq + 1; seq <= store.newestSeq; seq++) {
      assert.ok(store.timeMs(seq) >= store.timeMs(seq - 1), 'snapshot times only grow');
    }
  });

  it('joins a collection in flight and collects on demand at most once per interval', async () => {
    const store = new MetricStore(1);
    let calls = 0;
    const scheduler = new CollectionScheduler({
      collectors: [
        {
          name: 'counted',
          async collect(emit) {
            calls++;
            await sleep(20);
            emit('net_rx', ['lo'], calls);
          },
        },
      ],
      store,
      intervalMs: 60_000,
      timeoutMs: 1000,
      now: Date.now,
      logger: pino({ level: 'silent' }),
    });
    await Promise.all([scheduler.collectNow(), scheduler.collectNow()]);
    assert.equal(calls, 1, 'single-flight');
    await scheduler.collectIfOlderThan(60_000);
    assert.equal(calls, 1, 'fresh enough');
    await scheduler.collectIfOlderThan(0);
    assert.equal(calls, 2);
    assert.deepEqual(newestNetRx(store), { lo: 2 });
  });
});
