import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pointsBetween, type MetricHistory, type Tier } from '../../src/monitor/history/index.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { openHistory } from './support/history.js';

/** 30 minutes before a 6-hour window boundary of the minute tier, ms. */
const T0 = Date.UTC(2026, 0, 5, 6) - 30 * 60_000;
const CPU = 'cpu_idle';

/** One snapshot at `timeMs`: cpu_idle = `value`. */
function tick(history: MetricHistory, store: MetricStore, timeMs: number, value: number): void {
  const batch = new SampleBatch();
  batch.add(store.intern(METRIC_INDEX.get(CPU)!, []), value);
  store.commit(timeMs, batch);
  history.ingest(timeMs, batch, store);
}

/** The points of cpu_idle in a tier (step start, s → value), each time checked to appear once. */
async function cpuPoints(history: MetricHistory, tier: Tier): Promise<Map<number, number>> {
  const read = await history.read(tier, (series) => series.key === CPU, 0, Number.MAX_SAFE_INTEGER);
  const { timesSec, values } = pointsBetween(read.get(CPU)?.pieces ?? [], 0, Number.MAX_SAFE_INTEGER);
  const points = new Map<number, number>();
  timesSec.forEach((time, i) => {
    assert.ok(!points.has(time), `the point at ${time} answered twice`);
    points.set(time, values[i]!);
  });
  return points;
}

/** Size of the minute tier's write-ahead log (0 while there is none). */
function logBytes(dir: string): number {
  const log = readdirSync(join(dir, 'minute')).find((name) => name.endsWith('.wal'));
  return log === undefined ? 0 : statSync(join(dir, 'minute', log)).size;
}

describe('metrics history: the collection tick does not wait on the disk', () => {
  it('returns from the tick that finishes a minute before its record is written, and answers it meanwhile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-queue-'));
    const history = await openHistory(dir);
    try {
      const store = new MetricStore(8);
      for (let minute = 0; minute < 3; minute++) tick(history, store, T0 + minute * 60_000, minute);
      await history.settled();
      const before = logBytes(dir);
      // The first tick of minute 3 finishes minute 2: only queued when the tick returns.
      tick(history, store, T0 + 3 * 60_000, 3);
      assert.equal(logBytes(dir), before, 'nothing written inside the tick');
      const waiting = await cpuPoints(history, history.minute);
      await history.settled();
      assert.ok(logBytes(dir) > before, 'written after the tick');
      assert.deepEqual(waiting, await cpuPoints(history, history.minute));
      assert.equal(waiting.get((T0 + 2 * 60_000) / 1000), 2, 'the queued minute answered');
      assert.equal(history.failures, 0);
    } finally {
      await history.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers every point once while a window is being sealed, and the same after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-queue-'));
    const history = await openHistory(dir);
    try {
      const store = new MetricStore(8);
      // 32 minutes: the tick of minute 31 finishes minute 30, the new window's first, which seals
      // the old one. Reads start at every tick, each while the queue still holds its work.
      const reads: Promise<Map<number, number>>[] = [];
      for (let minute = 0; minute < 32; minute++) {
        tick(history, store, T0 + minute * 60_000, minute);
        reads.push(cpuPoints(history, history.minute));
      }
      const answered = await Promise.all(reads);
      await history.settled();
      assert.deepEqual(
        readdirSync(join(dir, 'minute')).filter((name) => name.endsWith('.seg')),
        [`${(T0 + 30 * 60_000 - 6 * 3600_000) / 1000}.seg`],
        'the old window is sealed',
      );
      const settled = await cpuPoints(history, history.minute);
      // Minutes 0–30 finished and the unfinished minute 31 as a provisional point.
      assert.equal(settled.size, 32);
      answered.forEach((points, minute) => {
        // Each read: the minutes finished by then and the unfinished one.
        assert.equal(points.size, minute + 1, `read at minute ${minute}`);
        for (const [time, value] of points)
          assert.equal(settled.get(time), value, `read at minute ${minute}`);
      });
    } finally {
      await history.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
