/**
 * Metrics queries whose body differs on every request, against the same server answering one
 * body over and over (issue 16): a dashboard with a range picker or users with different label
 * selections never hit the per-snapshot answer cache, so this measures the query engine itself.
 *
 * Method: the streamcore server of bench/metrics-api.ts (auth on, collection every 2 s over 300 s,
 * store filled with 150 real snapshots first, collection continuing during the run) in a child
 * process; autocannon in this one, pinned to another CPU when there are two. Per query kind, the
 * repeated identical body (the baseline) and the varied bodies alternate: 2 s warm-up each, then
 * ROUNDS rounds of DURATION s each; medians of req/s and of the server's CPU time per request.
 * The varied bodies are made per request by the load generator, so no two requests in a snapshot
 * carry the same text:
 * - latest: all 29 metrics in a random order, and for the metrics with labels, a label pattern
 *   picked at random from a small set (or none);
 * - series: `timerange_sec` a random integer in 100…120 with `interval_sec` 2, the 29 metrics in a
 *   random order.
 * The identical body is the same query with the catalog order, no patterns and 110 s.
 *
 * Run: node --import tsx bench/metrics-varied.ts   (BENCH_ROUNDS, BENCH_DURATION as in metrics-api)
 */
import autocannon, { type Options as AutocannonOptions } from 'autocannon';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { CLOCK_TICKS_PER_SEC, cpuTicks, median, pinLoadAndServers } from './measure.js';
import { CATALOG } from '../src/monitor/store/catalog.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP_SEC = 2;
const CONNECTIONS = 10;
/** Varied bodies whose answers are measured for the mean answer size. */
const VARIED_SAMPLES = 20;

/** Patterns a user might pick per label (compiled once by the server, then cached). */
const PATTERNS = ['', '^eth', 'lo', '.', '^/', 'mem', 'disk', '^(a|b)', 'e'];

interface Kind {
  label: string;
  identical: string;
  varied: () => string;
}

const names = CATALOG.map(({ name }) => name);

function shuffled<T>(values: readonly T[]): T[] {
  const copy = [...values];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function itemWithRandomLabels(name: string): object {
  const descriptor = CATALOG.find((entry) => entry.name === name)!;
  const label = descriptor.labels[0];
  if (label === undefined || Math.random() < 0.3) return { name };
  return { name, labels: { [label]: PATTERNS[Math.floor(Math.random() * PATTERNS.length)] } };
}

const KINDS: Kind[] = [
  {
    label: 'latest values, 29 metrics',
    identical: JSON.stringify({ metrics: names.map((name) => ({ name })) }),
    varied: () => JSON.stringify({ metrics: shuffled(names).map(itemWithRandomLabels) }),
  },
  {
    label: '100–120 s / 2 s series, 29 metrics',
    identical: JSON.stringify({
      timerange_sec: 110,
      interval_sec: 2,
      metrics: names.map((name) => ({ name })),
    }),
    varied: () =>
      JSON.stringify({
        timerange_sec: 100 + Math.floor(Math.random() * 21),
        interval_sec: 2,
        metrics: shuffled(names).map((name) => ({ name })),
      }),
  },
];

interface Round {
  rps: number;
  cpuMicrosPerRequest: number;
  failed: number;
}

/** `BENCH_CPU_PROF_DIR=dir` writes a CPU profile of the server there (for docs' "where the time goes"). */
const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR;
/** Extra Node/V8 flags for the server only (e.g. `--max-semi-space-size=1`), to compare settings. */
const SERVER_FLAGS = (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
const server = fork(join(import.meta.dirname, 'metrics-api.ts'), ['--streamcore'], {
  execArgv: [
    ...SERVER_FLAGS,
    ...(PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`]),
    '--import',
    'tsx',
  ],
});
try {
  const ready = await new Promise<{ ready: string; token?: string }>((resolve) =>
    server.once('message', resolve as never),
  );
  const pinning = pinLoadAndServers([server]);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ready.token !== undefined) headers.authorization = `Bearer ${ready.token}`;
  const rows: string[] = [];
  for (const kind of KINDS) {
    const identical: AutocannonOptions = {
      url: `${ready.ready}/api/v3/metrics`,
      method: 'POST',
      headers,
      body: kind.identical,
    };
    const varied: AutocannonOptions = {
      url: `${ready.ready}/api/v3/metrics`,
      requests: [
        { method: 'POST', headers, setupRequest: (request) => ({ ...request, body: kind.varied() }) },
      ],
    };
    // The identical body's answer, and the mean of varied ones (each varied body selects other series).
    const bytes = await answerBytes(identical.url, headers, kind.identical);
    let variedBytes = 0;
    for (let i = 0; i < VARIED_SAMPLES; i++)
      variedBytes += await answerBytes(identical.url, headers, kind.varied());
    variedBytes = Math.round(variedBytes / VARIED_SAMPLES);
    const runs = { identical: [] as Round[], varied: [] as Round[] };
    await run(identical, WARMUP_SEC);
    await run(varied, WARMUP_SEC);
    for (let round = 0; round < ROUNDS; round++) {
      runs.identical.push(await run(identical, DURATION_SEC));
      runs.varied.push(await run(varied, DURATION_SEC));
      process.stderr.write(
        `  ${kind.label} round ${round + 1}: identical ${Math.round(runs.identical.at(-1)!.rps)} req/s, varied ${Math.round(runs.varied.at(-1)!.rps)} req/s\n`,
      );
    }
    const same = summarize(runs.identical);
    const vary = summarize(runs.varied);
    rows.push(
      `| ${kind.label} | ${bytes} | ${variedBytes} | ${Math.round(same.rps)} | ${same.cpu.toFixed(1)} | ${Math.round(vary.rps)} | ${vary.cpu.toFixed(1)} | ${(vary.rps / same.rps).toFixed(2)}× | ≥ 0.5× |`,
    );
    const failed = [...runs.identical, ...runs.varied].reduce((sum, r) => sum + r.failed, 0);
    if (failed > 0) rows.push(`| (${kind.label}: ${failed} non-2xx answers or errors) |`);
  }
  console.log(
    `Varied vs identical metrics queries, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_SEC} s after ${WARMUP_SEC} s warm-up, medians (node ${process.version}; ${pinning})\n`,
  );
  console.log(
    '| query | answer bytes, identical | varied (mean) | identical req/s | µs CPU/req | varied req/s | µs CPU/req | ratio req/s | target |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const row of rows) console.log(row);
} finally {
  server.disconnect();
}

async function answerBytes(url: string, headers: Record<string, string>, body: string): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers, body });
  return (await response.arrayBuffer()).byteLength;
}

async function run(options: AutocannonOptions, durationSec: number): Promise<Round> {
  const before = cpuTicks(server);
  const result = await autocannon({
    ...options,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationSec,
  });
  const micros = ((cpuTicks(server) - before) * 1_000_000) / CLOCK_TICKS_PER_SEC;
  const requests = Math.max(1, result.requests.total ?? result.requests.average * durationSec);
  return {
    rps: result.requests.average,
    cpuMicrosPerRequest: micros / requests,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

function summarize(rounds: Round[]): { rps: number; cpu: number } {
  return { rps: median(rounds.map((r) => r.rps)), cpu: median(rounds.map((r) => r.cpuMicrosPerRequest)) };
}
