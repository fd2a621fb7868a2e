/**
 * Start-up time of an installed checkout (issue 11): how long `npm start` takes until `/ping`
 * answers, and until an invalid config has made it exit (targets: under 1 s each).
 *
 * Method: each round starts, one after the other, `npm start` (as the README runs it), the
 * command `npm start` runs without npm in front (`node dist/main.js`, to show npm's own share), and
 * a baseline: a bare `node:http` server answering `/ping` (the floor of any Node server: starting
 * node and listening). Each gets a fresh directory for its config file, db and disk storage, so
 * every start is a first start (config file created, admin password generated), and a free
 * loopback port. The clock starts right before the spawn; `/ping` is polled every 5 ms until it
 * answers 200; then the server is stopped (SIGTERM to its process group) before the next start.
 * The invalid-config case sets `CORE_METRICS_INTERVAL_SECONDS=often` and times until the process
 * has exited (code 1); its baseline is `node -e 'process.exit(1)'`. ROUNDS rounds (default 5),
 * medians. Needs `dist/` (built by `npm ci` through `prepare`, or `npm run build`).
 *
 * Run: node --import tsx bench/startup.ts
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, pingOnce } from './measure.js';
import { readStartScript } from '../scripts/start-script.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CHECKOUT = join(import.meta.dirname, '..');
const POLL_MS = 5;
/** A start that has not answered in this long counts as failed. */
const GIVE_UP_MS = 60_000;

const BARE_PING = `require('node:http').createServer((q, s) => s.end('pong')).listen(Number(process.env.PORT), '127.0.0.1')`;

interface Starter {
  label: string;
  command: string;
  args: string[];
}

function startCommand(): Starter {
  const script = readStartScript();
  return {
    label: `${script.text} (without npm)`,
    command: process.execPath,
    args: [...script.flags, script.entry],
  };
}

/** Milliseconds from spawn until `/ping` answers (or the process exits, which throws). */
async function timeToPing(starter: Starter, env: Record<string, string>, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(starter.command, starter.args, {
    cwd: CHECKOUT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.on('exit', () => ((exited = true), resolve())));
  try {
    while (!(await pingOnce(port))) {
      if (exited) throw new Error(`${starter.label} exited before answering: ${stderr}`);
      if (performance.now() - started > GIVE_UP_MS) throw new Error(`${starter.label} did not answer`);
      await sleep(POLL_MS);
    }
    return performance.now() - started;
  } finally {
    // The whole group: `npm start` runs the server under a shell of its own.
    if (!exited && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await exit;
  }
}

/** Milliseconds from spawn until the process has exited; throws unless it exits with code 1. */
async function timeToExit(starter: Starter, env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = spawn(starter.command, starter.args, {
    cwd: CHECKOUT,
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  if (code !== 1) throw new Error(`${starter.label} exited with ${code}, expected 1`);
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

async function main(): Promise<void> {
  if (!existsSync(join(CHECKOUT, 'dist', 'main.js'))) {
    throw new Error('dist/main.js is missing: npm ci (prepare) or npm run build first');
  }
  const npmStart: Starter = { label: 'npm start', command: 'npm', args: ['start', '--silent'] };
  const direct = startCommand();
  const bare: Starter = {
    label: 'baseline: bare node:http',
    command: process.execPath,
    args: ['-e', BARE_PING],
  };
  const bareExit: Starter = {
    label: 'baseline: node -e exit(1)',
    command: process.execPath,
    args: ['-e', 'process.exit(1)'],
  };
  const ping = new Map<string, number[]>();
  const invalid = new Map<string, number[]>();
  const record = (table: Map<string, number[]>, label: string, ms: number): void => {
    table.set(label, [...(table.get(label) ?? []), ms]);
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const starter of [npmStart, direct, bare]) {
      const dir = await mkdtemp(join(tmpdir(), 'streamcore-startup-'));
      try {
        const port = await freePort();
        const env = {
          PORT: String(port),
          CORE_ADDRESS: `127.0.0.1:${port}`,
          CORE_CONFIGFILE: join(dir, 'config.json'),
          CORE_DB_DIR: join(dir, 'db'),
          CORE_STORAGE_DISK_DIR: join(dir, 'data'),
        };
        record(ping, starter.label, await timeToPing(starter, env, port));
        const bad = { ...env, CORE_METRICS_INTERVAL_SECONDS: 'often' };
        const exitStarter = starter === bare ? bareExit : starter;
        record(invalid, exitStarter.label, await timeToExit(exitStarter, bad));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  }
  const rows = (table: Map<string, number[]>, baseline: string): string[] =>
    [...table].map(([label, values]) => {
      const ms = median(values);
      const ratio = ms / median(table.get(baseline) ?? [ms]);
      return `| ${label.padEnd(36)} | ${ms.toFixed(0).padStart(9)} | ${values
        .map((v) => v.toFixed(0))
        .join(', ')
        .padEnd(30)} | ${ratio.toFixed(1).padStart(5)}× |`;
    });
  console.log(`start-up, ${ROUNDS} rounds, medians (node ${process.version}, load average ${loadAverage()})`);
  console.log('');
  console.log(
    `| until /ping answers                  | median ms | rounds (ms)                    | ratio  |`,
  );
  console.log(
    `| ------------------------------------ | --------: | ------------------------------ | -----: |`,
  );
  for (const row of rows(ping, bare.label)) console.log(row);
  console.log('');
  console.log(
    `| until an invalid config has exited   | median ms | rounds (ms)                    | ratio  |`,
  );
  console.log(
    `| ------------------------------------ | --------: | ------------------------------ | -----: |`,
  );
  for (const row of rows(invalid, bareExit.label)) console.log(row);
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

await main();
