/**
 * The metrics history engine (src/monitor/history) against plain JSON lines (the baseline) and,
 * when BENCH_BETTER_SQLITE3 names an installed better-sqlite3, SQLite; all in the same run.
 *
 * Method (each engine in a fresh temporary directory; medians over ROUNDS after a warm-up):
 * 1. Disk: 7 days of 1-minute points of DISK_SERIES series (the mix below), written step by step
 *    as the server does; bytes of the tier's files ÷ retained points. Chunk files are measured
 *    twice: everything (28 sealed windows + the open window's write-ahead log, its worst case:
 *    full) and the sealed windows alone (the steady-state cost of a retained point).
 * 2. Write cost per collection tick, 10 000 series: `MetricHistory.ingest` after each store
 *    commit (2-second ticks over 8 minutes, the first 2 are warm-up): the median tick, and the
 *    median tick that also finishes a minute (aggregate → one log record). For every engine: the
 *    median cost of appending one minute of 10 000 points. Chunk files: the cost of sealing a full
 *    6-hour minute window of 10 000 series (once per 6 hours, in the tick that starts the next).
 * Times are medians of wall time and of this process's CPU time (user + system) per operation:
 * on a shared machine the CPU time is the steadier figure.
 * 3. Query: 366 days of 1-hour points of QUERY_SERIES series; read 100 of them over one year
 *    (8 760 points each). What is timed is the engine's query up to its answer, in the form a
 *    consumer takes it (chunk files: per series typed-array views of exactly the points in the
 *    range; JSON: the parsed values of the wanted series per step; SQLite: the rows); every point
 *    of the answer is then counted and checked against the range, untimed (`verify`).
 *    First read = the first after writing, in this process. Cold = median of ROUNDS reads each
 *    with nothing decoded in memory (chunk files: a fresh `Tier` loaded as at a server start,
 *    which parses and keeps the sealed files' indexes, but no decoded value; the code already
 *    optimised by the earlier reads); and for the chunk files also the median of 5 reads each in
 *    a fresh process (bench/history-cold-query.ts: the first query after a server start, code not
 *    optimised yet either). Warm = median of ROUNDS repeated reads (chunk files: answered from the
 *    decoded cache).
 * 4. Memory: heap + external after GC while a minute tier holds 1 day and then 7 days of
 *    DISK_SERIES series (chunk files: only the open window is in memory; the baseline kept in
 *    memory as parsed JSON grows with the retention).
 *
 * Series: the 15 values of running encoder processes (bench/history-workload.ts), which make up
 * most series of a server (host, filesystem and session metrics are a few dozen).
 *
 * Run: node --expose-gc --import tsx bench/history.ts
 *      BENCH_PHASES=query node --expose-gc --import tsx bench/history.ts   (one or more phases only)
 *      BENCH_BETTER_SQLITE3=/path/to/node_modules/better-sqlite3 node --expose-gc --import tsx bench/history.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SampleBatch } from '../src/monitor/store/sample-batch.js';
import { chunkEngine, jsonEngine, sqliteEngine, type BenchEngine } from './history-engines.js';
import { defaultHistory, processSeriesStore, workload } from './history-workload.js';

const DISK_SERIES = Number(process.env.BENCH_DISK_SERIES ?? 210);
const QUERY_SERIES = 210;
const TICK_SERIES = 10_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const START_SEC = Date.UTC(2025, 0, 1) / 1000;
const MINUTES_7D = 7 * 1440;

/** Wall time and CPU time (user + system, all threads of this process) of an operation, ms. */
type Timing = { wall: number; cpu: number };

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with: node --expose-gc --import tsx bench/history.ts');
  process.exit(1);
}

type Factory = (dir: string) => BenchEngine | undefined;
const FACTORIES: Factory[] = [chunkEngine, jsonEngine, sqliteEngine];

async function withEngine<T>(
  factory: Factory,
  run: (engine: BenchEngine) => Promise<T>,
): Promise<T | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'history-bench-'));
  const engine = factory(dir);
  try {
    return engine === undefined ? undefined : await run(engine);
  } finally {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Wall time and this process's CPU time (user + system) of one call, ms: the machine is shared.
 * A call that returns a promise is timed until it resolves (the chunk files write and read through
 * the thread pool; its threads' CPU time counts in the process's).
 */
async function timed(run: () => unknown): Promise<Timing> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run();
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

/** Blocks this thread for `ms` (the GC's helper threads go on). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function medianOf(samples: Timing[]): Timing {
  return { wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function usedBytes(): number {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

async function diskPhase(): Promise<void> {
  console.log(
    `\n1. Disk: 7 days of 1-minute points, ${DISK_SERIES} series (${MINUTES_7D * DISK_SERIES} points)`,
  );
  console.log('| engine | bytes per retained point | ratio to baseline |');
  console.log('| --- | ---: | ---: |');
  const rows: [string, number][] = [];
  for (const factory of FACTORIES) {
    await withEngine(factory, async (engine) => {
      const load = workload(DISK_SERIES);
      for (let k = 0; k < MINUTES_7D; k++) await engine.appendStep('minute', START_SEC + k * 60, load.step());
      const points = MINUTES_7D * DISK_SERIES;
      rows.push([engine.name, engine.diskBytes('minute') / points]);
      if ('tier' in engine) {
        // One more step seals the full window; what remains is the sealed files plus a one-step log.
        const tier = (engine as ReturnType<typeof chunkEngine>).tier('minute');
        await tier.seal();
        rows.push([`${engine.name}, sealed windows only`, tier.diskBytes / points]);
      }
    });
  }
  const baseline = rows.find(([name]) => name.includes('baseline'))![1];
  for (const [name, bytes] of rows)
    console.log(`| ${name} | ${bytes.toFixed(2)} | ${(bytes / baseline).toFixed(3)}× |`);
}

async function tickPhase(): Promise<void> {
  console.log(`\n2. Write cost, ${TICK_SERIES} series`);
  const dir = mkdtempSync(join(tmpdir(), 'history-bench-'));
  try {
    const history = await defaultHistory(dir);
    const { store, ids } = processSeriesStore(TICK_SERIES);
    const plain: { wall: number; cpu: number }[] = [];
    const flushing: { wall: number; cpu: number }[] = [];
    const batch = new SampleBatch();
    for (let tick = 0; tick < 240; tick++) {
      batch.clear();
      for (let i = 0; i < ids.length; i++) batch.add(ids[i]!, tick + i / 7);
      const timeMs = (START_SEC + 1 + tick * 2) * 1000;
      store.commit(timeMs, batch);
      const elapsed = await timed(() => history.ingest(timeMs, batch, store));
      // The queued file work runs between ticks, as in a server (not timed: the tick does not wait).
      await history.settled();
      // The first two minutes create every series' slot, log definition and chunk: warm-up.
      if (tick >= 60) ((tick * 2 + 1) % 60 < 2 ? flushing : plain).push(elapsed);
    }
    await history.close();
    const tick = medianOf(plain);
    const flush = medianOf(flushing);
    console.log(
      `MetricHistory.ingest per tick: ${tick.wall.toFixed(2)} ms wall, ${tick.cpu.toFixed(2)} ms CPU; ` +
        `a tick that finishes a minute: ${flush.wall.toFixed(1)} ms wall, ${flush.cpu.toFixed(1)} ms CPU`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    '| engine | appending one minute of 10 000 points: wall (ms) | CPU (ms) | ratio to baseline (CPU) |',
  );
  console.log('| --- | ---: | ---: | ---: |');
  const rows: [string, { wall: number; cpu: number }][] = [];
  const load = workload(TICK_SERIES);
  const steps = Array.from({ length: ROUNDS + 2 }, () => load.step());
  for (const factory of FACTORIES) {
    await withEngine(factory, async (engine) => {
      const times: Timing[] = [];
      for (const [k, points] of steps.entries())
        times.push(await timed(() => engine.appendStep('minute', START_SEC + k * 60, points)));
      rows.push([engine.name, medianOf(times.slice(2))]);
    });
  }
  const baseline = rows.find(([name]) => name.includes('baseline'))![1].cpu;
  for (const [name, ms] of rows) {
    console.log(
      `| ${name} | ${ms.wall.toFixed(1)} | ${ms.cpu.toFixed(1)} | ${(ms.cpu / baseline).toFixed(2)}× |`,
    );
  }
  // Once per 6 hours the tick that starts a new window also seals the old one into a segment file.
  await withEngine(chunkEngine, async (engine) => {
    for (let k = 0; k < 360; k++) await engine.appendStep('minute', START_SEC + k * 60, load.step());
    const seal = await timed(() => (engine as ReturnType<typeof chunkEngine>).tier('minute').seal());
    console.log(
      `Sealing a full minute window (360 points of ${TICK_SERIES} series) into a segment file: ` +
        `${seal.wall.toFixed(1)} ms wall, ${seal.cpu.toFixed(1)} ms CPU`,
    );
  });
}

async function queryPhase(): Promise<void> {
  console.log(`\n3. Query: one year of 1-hour points of 100 series (of ${QUERY_SERIES})`);
  console.log(
    '| engine | first read after writing: CPU (ms) | cold: wall (ms) | CPU (ms) | warm: wall (ms) | CPU (ms) | ratio to baseline (cold CPU) |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  const rows: [string, Timing | undefined, Timing, Timing | undefined][] = [];
  const hours = 366 * 24;
  for (const factory of FACTORIES) {
    await withEngine(factory, async (engine) => {
      const load = workload(QUERY_SERIES, 3600);
      for (let k = 0; k < hours; k++) await engine.appendStep('hour', START_SEC + k * 3600, load.step());
      const keys = new Set(load.series.slice(0, 100).map((series) => series.key));
      const toSec = START_SEC + (hours - 1) * 3600;
      const fromSec = toSec - 365 * 86_400 + 3600;
      // Timed: the engine's query, up to its answer. Not timed: checking every point of it.
      const read = async (): Promise<Timing> => {
        let answer: unknown;
        const time = await timed(async () => (answer = await engine.query('hour', keys, fromSec, toSec)));
        const count = engine.verify(answer, fromSec, toSec);
        if (count !== 100 * 8760) throw new Error(`${engine.name}: read ${count} points`);
        return time;
      };
      const first = await read();
      // Cold: nothing decoded in memory (a fresh Tier, loaded as at a start), the code already
      // optimised. The forced GC's concurrent sweeping is let finish first: it is the bench's
      // doing, and its threads' CPU time would otherwise count in the read's.
      const cold: Timing[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await engine.reopen();
        gc!();
        pause(100);
        cold.push(await read());
      }
      const warm: Timing[] = [];
      for (let round = 0; round < ROUNDS; round++) warm.push(await read());
      rows.push([engine.name, first, medianOf(cold), medianOf(warm)]);
      if (!('tier' in engine)) return;
      // Cold in a fresh process: the first query after a start, code not yet optimised either.
      const queryFile = join(tmpdir(), `history-bench-query-${process.pid}.json`);
      writeFileSync(queryFile, JSON.stringify({ keys: [...keys], fromSec, toSec, points: 100 * 8760 }));
      const dir = (engine as ReturnType<typeof chunkEngine>).dir;
      const fresh = Array.from({ length: Math.min(ROUNDS, 5) }, () => {
        const output = execFileSync(
          process.execPath,
          ['--import', 'tsx', join(import.meta.dirname, 'history-cold-query.ts'), dir, queryFile],
          { encoding: 'utf8' },
        );
        return JSON.parse(output) as Timing;
      });
      rmSync(queryFile, { force: true });
      rows.push([`${engine.name}, a fresh process`, undefined, medianOf(fresh), undefined]);
    });
  }
  const baseline = rows.find(([name]) => name.includes('baseline'))![2].cpu;
  const ms = (time: number | undefined): string => (time === undefined ? '—' : time.toFixed(1));
  for (const [name, first, cold, warm] of rows) {
    const figures = [first?.cpu, cold.wall, cold.cpu, warm?.wall, warm?.cpu].map(ms).join(' | ');
    console.log(`| ${name} | ${figures} | ${(cold.cpu / baseline).toFixed(3)}× |`);
  }
}

async function memoryPhase(): Promise<void> {
  console.log(`\n4. Memory (heap + external after GC), minute tier of ${DISK_SERIES} series`);
  const load = workload(DISK_SERIES);
  const before = usedBytes();
  const kept: [number, ...number[]][][] = load.series.map(() => []);
  const baseline: number[] = [];
  const engine = chunkEngine(mkdtempSync(join(tmpdir(), 'history-bench-')));
  const engineBytes: number[] = [];
  for (let k = 0; k < MINUTES_7D; k++) {
    const points = load.step();
    await engine.appendStep('minute', START_SEC + k * 60, points);
    if (k === 1439 || k === MINUTES_7D - 1) engineBytes.push(usedBytes() - before);
  }
  await engine.close();
  rmSync(engine.dir, { recursive: true, force: true });
  const start = usedBytes();
  for (let k = 0; k < MINUTES_7D; k++) {
    load.step().forEach(({ values }, i) => kept[i]!.push([START_SEC + k * 60, ...values]));
    if (k === 1439 || k === MINUTES_7D - 1) baseline.push(usedBytes() - start);
  }
  console.log('| engine | 1 day retained (MiB) | 7 days retained (MiB) |');
  console.log('| --- | ---: | ---: |');
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
  console.log(`| ${engine.name} | ${mib(engineBytes[0]!)} | ${mib(engineBytes[1]!)} |`);
  console.log(`| points kept in memory as parsed JSON | ${mib(baseline[0]!)} | ${mib(baseline[1]!)} |`);
}

// BENCH_PHASES=query (or any comma-separated subset of disk,write,query,memory) runs only those.
const PHASES = { disk: diskPhase, write: tickPhase, query: queryPhase, memory: memoryPhase };
const chosen = (process.env.BENCH_PHASES ?? Object.keys(PHASES).join(',')).split(',');
for (const [name, run] of Object.entries(PHASES)) if (chosen.includes(name)) await run();
