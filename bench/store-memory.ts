/**
 * Memory per retained sample of the metric store (docs/metrics.md#collection: "close to the size of its value").
 *
 * Method: with `--expose-gc`, for each round: collect garbage, read heap + external memory
 * (typed arrays live outside the V8 heap), build a store of SERIES series × SNAPSHOTS snapshots
 * (the ring filled and wrapped by EXTRA_TICKS, so it is in its steady state), collect garbage again, read again. The delta
 * divided by the retained samples is the cost per sample, everything included (label strings,
 * interning map, value rows). The baseline in the same run is the obvious design: one
 * `{time, value}` object per sample in a JS array per series.
 * Rounds: 3; the table shows medians. Commit time is the median over the commits after the ring wrapped.
 *
 * Run: node --expose-gc --import tsx bench/store-memory.ts
 */
import { SampleBatch } from '../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../src/monitor/store/store.js';

const SERIES = 100_000;
const SNAPSHOTS = 150;
const ROUNDS = 3;
const EXTRA_TICKS = 20;
const TARGET_BYTES_PER_SAMPLE = 16;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with: node --expose-gc --import tsx bench/store-memory.ts');
  process.exit(1);
}

function usedBytes(): number {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  // `external` includes `arrayBuffers` (the typed arrays' memory).
  return usage.heapUsed + usage.external;
}

/** Label values of series `i`: 15 values per process, like `restream_process{processid,state,order,name}`. */
function labelsOf(i: number): string[] {
  return [`process-${Math.floor(i / 15)}`, 'running', 'start', `value${i % 15}`];
}

function measureStore(): { bytesPerSample: number; valueBytes: number; commitMs: number; series: number } {
  const before = usedBytes();
  const store = new MetricStore(SNAPSHOTS);
  const metric = METRIC_INDEX.get('restream_process')!;
  const batch = new SampleBatch();
  const commitTimes: number[] = [];
  for (let tick = 0; tick < SNAPSHOTS + EXTRA_TICKS; tick++) {
    batch.clear();
    for (let i = 0; i < SERIES; i++) batch.add(store.intern(metric, labelsOf(i)), tick + i / SERIES);
    const started = performance.now();
    store.commit(tick * 2000, batch);
    if (tick >= SNAPSHOTS) commitTimes.push(performance.now() - started);
  }
  let retained = 0;
  for (const id of store.seriesOf(metric)) {
    for (let seq = store.oldestSeq; seq <= store.newestSeq; seq++)
      if (!Number.isNaN(store.value(id, seq))) retained++;
  }
  batch.clear();
  const after = usedBytes();
  const result = {
    bytesPerSample: (after - before) / retained,
    valueBytes: store.valueBytes,
    commitMs: median(commitTimes),
    series: store.seriesCount,
  };
  void store.newestSeq; // keep the store alive until after the measurement
  return result;
}

function measureObjects(): number {
  const before = usedBytes();
  const series: { time: number; value: number }[][] = [];
  for (let i = 0; i < SERIES; i++) {
    const samples: { time: number; value: number }[] = [];
    for (let tick = 0; tick < SNAPSHOTS; tick++)
      samples.push({ time: tick * 2000, value: tick + i / SERIES });
    series.push(samples);
  }
  const after = usedBytes();
  void series.length;
  return (after - before) / (SERIES * SNAPSHOTS);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const storeRounds = Array.from({ length: ROUNDS }, measureStore);
const objectRounds = Array.from({ length: ROUNDS }, measureObjects);
const store = {
  bytesPerSample: median(storeRounds.map((round) => round.bytesPerSample)),
  commitMs: median(storeRounds.map((round) => round.commitMs)),
  valueBytes: storeRounds[0]!.valueBytes,
  series: storeRounds[0]!.series,
};
const objects = median(objectRounds);

console.log(
  `Store memory: ${SERIES} series × ${SNAPSHOTS} snapshots, ${ROUNDS} rounds, medians (node ${process.version})\n`,
);
console.log('| layout | bytes per retained sample | ratio to baseline |');
console.log('|---|---:|---:|');
console.log(
  `| MetricStore (typed-array rows, NaN = absent) | ${store.bytesPerSample.toFixed(2)} | ${(store.bytesPerSample / objects).toFixed(2)}× |`,
);
console.log(`| baseline: one {time, value} object per sample | ${objects.toFixed(2)} | 1.00× |`);
console.log('');
console.log(`value rows: ${(store.valueBytes / 2 ** 20).toFixed(1)} MiB for ${store.series} live series`);
console.log(`commit of one snapshot of ${SERIES} samples: ${store.commitMs.toFixed(2)} ms (median)`);
console.log(
  `target ≤ ${TARGET_BYTES_PER_SAMPLE} bytes per sample: ${store.bytesPerSample <= TARGET_BYTES_PER_SAMPLE ? 'met' : 'NOT met'}`,
);
