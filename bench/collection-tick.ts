/**
 * What the metrics history costs the collection tick, 10 000 series, across a window seal.
 *
 * Method: a fresh history in a temporary directory and a store of TICK_SERIES series (the mix of
 * bench/history.ts: 15 values per encoder process). A clock starting 20 minutes before a 6-hour
 * boundary ticks every 2 seconds for 40 minutes of simulated time (1 200 ticks): 40 ticks finish
 * a minute (one log record of 10 000 points each), one of them starts the next 6-hour window and
 * so seals the old one into a segment file, and one starts a new hour. What is timed per tick is
 * what the scheduler does on the event loop after its collectors answered: `store.commit` and
 * `MetricHistory.ingest` (the `afterCommit` hook). Between ticks the process waits for the
 * history's queued file work to finish (untimed), as a server does in the seconds between ticks,
 * so every tick starts with an idle queue. The first 2 minutes are warm-up (slots, chunks, code).
 * Also reported: the longest the event loop was blocked during the run (`monitorEventLoopDelay`,
 * 1 ms resolution), which includes work the history does off the tick (encoding a segment).
 *
 * Prints one JSON line per run: p50, p99 and max of the tick (ms), the tick that sealed, and the
 * event loop's longest delay. The machine this runs on may be shared: run it several times and
 * take medians (docs/history.md, The event loop and the disk).
 *
 * Run: node --expose-gc --import tsx bench/collection-tick.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SampleBatch } from '../src/monitor/store/sample-batch.js';
import { defaultHistory, processSeriesStore } from './history-workload.js';

const TICK_SERIES = Number(process.env.BENCH_TICK_SERIES ?? 10_000);
const WINDOW_SEC = 6 * 3600;
/** 20 minutes before a 6-hour boundary (Unix seconds). */
const START_SEC = Date.UTC(2025, 0, 1) / 1000 + WINDOW_SEC - 20 * 60;
const TICK_SEC = 2;
const TICKS = (40 * 60) / TICK_SEC;
const WARM_UP_TICKS = (2 * 60) / TICK_SEC;
/** The first tick after the new window's first minute. */
const SEAL_TICK_SEC = START_SEC + 20 * 60 + 60 + 1;

/** The history's queued file work, where the history has such a queue. */
type Settling = { settled?: () => Promise<void> };

async function run(): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'tick-bench-'));
  const history = await defaultHistory(dir);
  const { store, ids } = processSeriesStore(TICK_SERIES);
  const batch = new SampleBatch();
  const ticks: number[] = [];
  let sealTick = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  try {
    for (let tick = 0; tick < TICKS; tick++) {
      if (tick === WARM_UP_TICKS) loop.enable();
      batch.clear();
      for (let i = 0; i < ids.length; i++) batch.add(ids[i]!, tick + i / 7);
      const timeMs = (START_SEC + 1 + tick * TICK_SEC) * 1000;
      const started = performance.now();
      store.commit(timeMs, batch);
      history.ingest(timeMs, batch, store);
      const elapsed = performance.now() - started;
      if (tick >= WARM_UP_TICKS) ticks.push(elapsed);
      // The new window's first minute is appended (and the old window sealed) when it finishes.
      if (timeMs / 1000 === SEAL_TICK_SEC) sealTick = elapsed;
      await (history as Settling).settled?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    loop.disable();
    await history.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  ticks.sort((a, b) => a - b);
  const at = (q: number): number => ticks[Math.min(ticks.length - 1, Math.floor(q * ticks.length))]!;
  return {
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    max: round(ticks.at(-1)!),
    sealTick: round(sealTick),
    loopMaxDelay: round(loop.max / 1e6),
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

console.log(JSON.stringify(await run()));
