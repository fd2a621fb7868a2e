/**
 * What each cache on the metrics query path gains (docs/metrics.md#caches-on-the-query-path):
 * `MetricsQueryService` in process, no HTTP, answering the workloads below from a store and a
 * history on disk, in one or more checkouts of streamcore measured alternately in one run.
 *
 * Method: the parent writes a history once (SERIES `restream_process` series, 15 values of each of
 * SERIES / 15 encoder processes, bench/history-workload.ts: 7 days of minute points and 366 days
 * of hour points, through the tiers as the server writes them). Then, ROUNDS times, for each
 * checkout in BENCH_CHECKOUTS (default: this one) in turn, a child process loads its own copy of
 * that history as a server start does, fills a store of the same series with 150 snapshots 2 s
 * apart, and times each workload: SNAPSHOTS snapshots, each committed (untimed) and then asked the
 * workload's queries, each answered as `POST /api/v3/metrics` is (the body text looked up with
 * `cachedAnswer`, else parsed and answered, then reported written); the first 3 snapshots are
 * warm-up. Timed per query, from the request's text to its answer: wall time, and the process's
 * CPU time (all its threads: the history's reads run in the thread pool), which a busy machine
 * disturbs far less than the wall time of a query that waits for the thread pool (but counts in
 * whole µs: read the raw-window rows by their wall time). A child prints the medians per query of
 * each workload; the parent prints, per
 * workload and checkout, the median over the rounds and the ratio to the first checkout. A
 * checkout with a cache taken out (a copy of the tree with that cache's bound set to zero)
 * measured beside the unchanged one gives that cache's gain; the machine may be busy, so only the
 * ratios within one run mean much.
 *
 * Workloads (one query = one request):
 * - raw, latest / 100–120 s series, 29 metrics, varied: bench/metrics-varied.ts's varied bodies,
 *   8 per snapshot, over the process series and a few series of every other metric;
 * - raw, repeated: 8 queries per snapshot with the same body text (a dashboard polling, several
 *   viewers), the last 300 s of one process;
 * - raw, same query, other text: 8 queries per snapshot asking the same, each spelled differently
 *   (key order, spaces): different clients;
 * - raw, varied: 8 queries per snapshot, each a random process and a random range of 100–300 s;
 * - history, range picker: per snapshot one query of each range 1 h, 6 h, 24 h, 7 d, 30 d, 1 y
 *   (the tier's default step) for one random process: a user clicking through the ranges;
 * - history, viewers: per snapshot 8 queries of 24 h or 7 d, each for one of 4 processes at random:
 *   several viewers of a few charts.
 *
 * One file past 300 lines: it runs as the parent and as each child (`--measure`), which share the
 * workloads.
 *
 * Run: node --import tsx bench/metrics-query-caches.ts
 *      BENCH_CHECKOUTS=/path/a,/path/b BENCH_ROUNDS=3 node --import tsx bench/metrics-query-caches.ts
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chunkEngine } from './history-engines.js';
import { workload } from './history-workload.js';
import { median } from './measure.js';
import { CATALOG } from '../src/monitor/store/catalog.js';
// Types only: each child loads these modules from the checkout it measures.
import type * as HistoryModule from '../src/monitor/history/index.js';
import type * as QueryModule from '../src/monitor/query/index.js';
import type * as BatchModule from '../src/monitor/store/sample-batch.js';
import type * as StoreModule from '../src/monitor/store/store.js';

const SERIES = Number(process.env.BENCH_SERIES ?? 150);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SNAPSHOTS = Number(process.env.BENCH_SNAPSHOTS ?? 40);
const WARM_UP_SNAPSHOTS = 3;
const QUERIES_PER_SNAPSHOT = 8;
/** The newest minute of the history: the store's snapshots follow it. */
const END_SEC = Date.UTC(2026, 0, 1) / 1000;
const MINUTES = 7 * 1440;
const HOURS = 366 * 24;

interface Workload {
  name: string;
  /** The bodies (as sent) of one snapshot's queries. */
  bodies(random: () => number): string[];
}

const PROCESSES = Math.max(1, Math.floor(SERIES / 15));
const pick = <T>(random: () => number, values: readonly T[]): T =>
  values[Math.floor(random() * values.length)]!;
const oneProcess = (p: number): object => ({ name: 'restream_process', labels: { processid: `^p${p}$` } });
const NAMES = CATALOG.map(({ name }) => name);
/** Label values of the other metrics' series (bench/metrics-varied.ts's patterns match some of them). */
const LABEL_VALUES = ['eth0', 'lo', '/', '/mnt/data', 'memfs', 'diskfs', 'a1', 'b2'];
/** bench/metrics-varied.ts's patterns. */
const PATTERNS = ['', '^eth', 'lo', '.', '^/', 'mem', 'disk', '^(a|b)', 'e'];

function shuffled<T>(random: () => number, values: readonly T[]): T[] {
  const copy = [...values];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function itemWithRandomLabels(random: () => number, name: string): object {
  const label = CATALOG.find((entry) => entry.name === name)!.labels[0];
  if (label === undefined || random() < 0.3) return { name };
  return { name, labels: { [label]: pick(random, PATTERNS) } };
}

const WORKLOADS: Workload[] = [
  {
    name: 'raw, latest, 29 metrics, varied',
    bodies: (random) =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, () =>
        JSON.stringify({
          metrics: shuffled(random, NAMES).map((name) => itemWithRandomLabels(random, name)),
        }),
      ),
  },
  {
    name: 'raw, 100–120 s series, 29 metrics, varied',
    bodies: (random) =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, () =>
        JSON.stringify({
          timerange_sec: 100 + Math.floor(random() * 21),
          interval_sec: 2,
          metrics: shuffled(random, NAMES).map((name) => ({ name })),
        }),
      ),
  },
  {
    name: 'raw, repeated',
    bodies: () =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, () =>
        JSON.stringify({ timerange_sec: 300, interval_sec: 2, metrics: [oneProcess(1)] }),
      ),
  },
  {
    name: 'raw, same query, other text',
    bodies: () =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, (_, i) =>
        i % 2 === 0
          ? JSON.stringify({ metrics: [oneProcess(1)], interval_sec: 2, timerange_sec: 300 }, null, i)
          : JSON.stringify({ timerange_sec: 300, interval_sec: 2, metrics: [oneProcess(1)] }, null, i),
      ),
  },
  {
    name: 'raw, varied',
    bodies: (random) =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, () =>
        JSON.stringify({
          timerange_sec: 100 + Math.floor(random() * 201),
          interval_sec: 2,
          metrics: [oneProcess(Math.floor(random() * PROCESSES))],
        }),
      ),
  },
  {
    name: 'history, range picker',
    bodies: (random) => {
      const process = Math.floor(random() * PROCESSES);
      return [3600, 6 * 3600, 86_400, 7 * 86_400, 30 * 86_400, 365 * 86_400].map((range) =>
        JSON.stringify({ timerange_sec: range, metrics: [oneProcess(process)] }),
      );
    },
  },
  {
    name: 'history, viewers',
    bodies: (random) =>
      Array.from({ length: QUERIES_PER_SNAPSHOT }, () =>
        JSON.stringify({
          timerange_sec: pick(random, [86_400, 7 * 86_400]),
          metrics: [oneProcess(Math.floor(random() * Math.min(4, PROCESSES)))],
        }),
      ),
  },
];

/** A deterministic pseudo-random source: every checkout answers the same queries. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/** The history the children read: SERIES series over 7 days of minutes and 366 days of hours. */
async function writeHistory(dir: string): Promise<void> {
  const engine = chunkEngine(dir);
  for (const [tier, stepSec, steps] of [
    ['minute', 60, MINUTES],
    ['hour', 3600, HOURS],
  ] as const) {
    const load = workload(SERIES, stepSec);
    const first = END_SEC - (steps - 1) * stepSec;
    for (let k = 0; k < steps; k++) await engine.appendStep(tier, first + k * stepSec, load.step());
  }
  await engine.close();
}

/** One child: loads `dir` with the checkout's code and prints each workload's median µs per query. */
async function measure(checkout: string, dir: string): Promise<void> {
  const src = (path: string): string => join(checkout, 'src', path);
  const { MetricsQueryService } = (await import(src('monitor/query/index.ts'))) as typeof QueryModule;
  const { MetricHistory } = (await import(src('monitor/history/index.ts'))) as typeof HistoryModule;
  const { MetricStore, METRIC_INDEX } = (await import(src('monitor/store/store.ts'))) as typeof StoreModule;
  const { SampleBatch } = (await import(src('monitor/store/sample-batch.ts'))) as typeof BatchModule;
  const { pino } = await import('pino');

  const history = new MetricHistory({
    dir,
    minuteRetentionDays: 7,
    hourRetentionDays: 400,
    maxSizeBytes: 0,
    logger: pino({ level: 'silent' }),
  });
  await history.load();
  const store = new MetricStore(150);
  const metric = METRIC_INDEX.get('restream_process')!;
  const ids = workload(SERIES).series.map((series) => store.intern(metric, [...series.labelValues]));
  // A few series of every other metric, for the 29-metric queries.
  for (const [index, { labels }] of CATALOG.entries()) {
    if (index === metric) continue;
    const values = labels.length === 0 ? [''] : LABEL_VALUES;
    for (const value of values)
      ids.push(
        store.intern(
          index,
          labels.map((_, i) => (i === 0 ? value : 'x')),
        ),
      );
  }
  const batch = new SampleBatch();
  let timeMs = (END_SEC + 60) * 1000;
  const commit = (): void => {
    batch.clear();
    for (let i = 0; i < ids.length; i++) batch.add(ids[i]!, (timeMs / 1000) * (i + 1));
    store.commit(timeMs, batch);
    timeMs += 2000;
  };
  for (let i = 0; i < 150; i++) commit();
  const limits = {
    maxPatternLength: 1000,
    maxTotalPatternLength: 16_000,
    maxItems: 1000,
    maxProgramSize: 20_000,
    maxTimeMs: 60_000,
  };
  const service = new MetricsQueryService(
    store,
    { rangeSec: 300, intervalSec: 2 },
    limits,
    undefined,
    history,
  );
  const result: Record<string, number> = {};
  for (const [w, load] of WORKLOADS.entries()) {
    const next = random(1000 + w);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let s = 0; s < SNAPSHOTS; s++) {
      commit();
      for (const text of load.bodies(next)) {
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        const answer = service.cachedAnswer(text) ?? (await service.answer(JSON.parse(text), text));
        const elapsed = performance.now() - started;
        const used = process.cpuUsage(cpuBefore);
        if (answer.bytes.length < 50) throw new Error(`${load.name}: an empty answer`);
        if (service.reusesMemory(answer)) service.written(answer);
        if (s < WARM_UP_SNAPSHOTS) continue;
        wall.push(elapsed * 1000);
        cpu.push(used.user + used.system);
      }
    }
    result[`${load.name}: wall`] = median(wall);
    result[`${load.name}: CPU`] = median(cpu);
  }
  await history.close();
  console.log(JSON.stringify(result));
}

async function main(): Promise<void> {
  const checkouts = (process.env.BENCH_CHECKOUTS ?? resolve(import.meta.dirname, '..'))
    .split(',')
    .map((path) => resolve(path));
  const root = mkdtempSync(join(tmpdir(), 'query-caches-'));
  try {
    const written = performance.now();
    await writeHistory(join(root, 'history'));
    process.stderr.write(
      `history of ${SERIES} series written in ${Math.round(performance.now() - written)} ms\n`,
    );
    const runs = new Map<string, Record<string, number>[]>(checkouts.map((c) => [c, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const checkout of checkouts) {
        const dir = join(root, `copy-${round}`);
        cpSync(join(root, 'history'), dir, { recursive: true });
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ['--import', 'tsx', import.meta.filename, '--measure', checkout, dir],
          { cwd: checkout, maxBuffer: 1 << 20 },
        );
        rmSync(dir, { recursive: true, force: true });
        const figures = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, number>;
        runs.get(checkout)!.push(figures);
        process.stderr.write(`round ${round + 1}, ${checkout}: ${stdout.trim()}\n`);
      }
    }
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `\nµs per query (wall; CPU of all threads), medians of ${ROUNDS} rounds (each the median of ${SNAPSHOTS - WARM_UP_SNAPSHOTS} snapshots' queries); ${SERIES} series; node ${process.version}; load ${load}\n`,
    );
    console.log(`| workload | ${checkouts.join(' | ')} |`);
    console.log(`|---|${checkouts.map(() => '---:').join('|')}|`);
    for (const { name } of WORKLOADS) {
      for (const measure of ['wall', 'CPU']) {
        const key = `${name}: ${measure}`;
        const figures = checkouts.map((c) => median(runs.get(c)!.map((run) => run[key]!)));
        const cells = figures.map((f, i) =>
          i === 0 ? f.toFixed(1) : `${f.toFixed(1)} (${(f / figures[0]!).toFixed(2)}×)`,
        );
        console.log(`| ${key} | ${cells.join(' | ')} |`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--measure') await measure(process.argv[3]!, process.argv[4]!);
else await main();
