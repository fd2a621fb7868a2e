import { CATALOG } from '../../src/monitor/store/catalog.js';
import { MetricsQueryService } from '../../src/monitor/query/index.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { seededRandom } from './seeded-random.js';
import { LIMITS } from './query-limits.js';

/**
 * Random stores and queries for the differential tests of the metrics query (fragments against
 * the plain evaluation): deterministic per seed, so a failure can be replayed.
 */

export { LIMITS };

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed by its seed. */
export const randomSource = seededRandom;

export const LABEL_VALUES = [
  'eth0',
  'lo',
  'cam1',
  'cam10',
  'a"b',
  'back\\slash',
  'ünï',
  '',
  'hls',
  'hlsingress',
  '日本',
];
export const PATTERNS = ['', '^eth', 'o', '^cam1$', 'cam1', '(a|b)', '.', '^$', 'hls', '^hls$', '[ü日]', 'x'];
export const METRICS = [
  'cpu_idle',
  'net_rx',
  'net_tx',
  'disk_total',
  'restream_process',
  'restream_state',
  'uptime_uptime',
];

export interface Scenario {
  store: MetricStore;
  retention: { rangeSec: number; intervalSec: number };
  service: MetricsQueryService;
  random: () => number;
  pick<T>(values: readonly T[]): T;
}

export function scenario(seed: number): Scenario {
  const random = randomSource(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const capacity = 2 + Math.floor(random() * 30);
  const intervalSec = pick([1, 2, 5]);
  const retention = { rangeSec: capacity * intervalSec, intervalSec };
  const store = new MetricStore(capacity);
  return { store, retention, service: new MetricsQueryService(store, retention, LIMITS), random, pick };
}

export function randomValue(random: () => number): number {
  const kind = random();
  if (kind < 0.3) return Math.floor(random() * 1e6);
  if (kind < 0.6) return (random() - 0.5) * 1000;
  if (kind < 0.7) return -0;
  if (kind < 0.8) return random() * 1e-4;
  if (kind < 0.85) return 1e21 * random();
  if (kind < 0.9) return Number.NaN;
  if (kind < 0.95) return Number.POSITIVE_INFINITY;
  return 1795314780.25;
}

/** A pool of series that come and go: each is present in a snapshot with its own probability. */
export function commitRandomSnapshot(
  s: Scenario,
  timeMs: number,
  pool: { metric: number; labels: string[]; p: number }[],
): SampleBatch {
  const batch = new SampleBatch();
  for (const series of pool) {
    if (s.random() < series.p) batch.add(s.store.intern(series.metric, series.labels), randomValue(s.random));
  }
  s.store.commit(timeMs, batch);
  return batch;
}

export function randomSeriesPool(s: Scenario): { metric: number; labels: string[]; p: number }[] {
  const pool = [];
  const count = 1 + Math.floor(s.random() * 25);
  for (let i = 0; i < count; i++) {
    const name = s.pick(METRICS);
    const metric = METRIC_INDEX.get(name)!;
    const labels = CATALOG[metric]!.labels.map(() => s.pick(LABEL_VALUES));
    pool.push({ metric, labels, p: s.pick([0, 0.1, 0.5, 0.9, 1]) });
  }
  return pool;
}

export function randomQuery(s: Scenario): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (s.random() < 0.7)
    body.timerange_sec = s.pick([0, 1, 2, 3, 5, 7]) + Math.floor(s.random() * (s.retention.rangeSec + 10));
  if (s.random() < 0.6) body.interval_sec = s.pick([1, 2, 3, 4, 5, 7, 11, s.retention.intervalSec]);
  const items = [];
  const count = Math.floor(s.random() * 6);
  for (let i = 0; i < count; i++) {
    const item: Record<string, unknown> = { name: s.random() < 0.05 ? 'no_such_metric' : s.pick(METRICS) };
    if (s.random() < 0.5) {
      const labels: Record<string, string | null> = {};
      const names = ['interface', 'processid', 'state', 'name', 'path', 'nolabel'];
      const selectors = 1 + Math.floor(s.random() * 2);
      for (let j = 0; j < selectors; j++) labels[s.pick(names)] = s.random() < 0.1 ? null : s.pick(PATTERNS);
      item.labels = labels;
    }
    items.push(item);
  }
  if (items.length > 0 || s.random() < 0.5) body.metrics = items;
  return body;
}
