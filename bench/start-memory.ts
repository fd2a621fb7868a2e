/**
 * Memory at start (issue 31 item 3): the RSS of the server right after it has started, before any
 * process runs, next to bare Node's floor (a `node:http` server answering `/ping`), and where it is.
 *
 * Method: each round starts, one after the other, the server as `npm start` runs it (`node [the
 * start script's flags] dist/main.js`, read from package.json, in a fresh directory for config, db
 * and storage: a first start) and the bare server (same Node flags). Each is read SETTLE_MS
 * (default 5 s) after `/ping` first answers: VmRSS, RssAnon, RssFile from /proc/<pid>/status and
 * bench/rss-breakdown.ts's split of the anonymous part. Then each is started a second time with
 * bench/heap-probe.mjs (`--import`), which reports V8's heap (resident size, bytes used, bytecode,
 * machine code, per space) on SIGUSR2: that is the heap's share of the RSS above. The probe adds a
 * flag, and V8 accepts a code cache only under the flags that wrote it (src/boot/code-cache.ts),
 * so one unmeasured start with the probe first writes the cache it then reads; that cache file is
 * removed at the end. ROUNDS rounds (default 5), medians (the machine may be busy: memory at start
 * moves less with load than time does, but still by a MB or two).
 *
 * Run: npm run build && node --import tsx bench/start-memory.ts   (BENCH_ROUNDS=5, BENCH_SETTLE_MS)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './measure.js';
import { rssBreakdown } from './rss-breakdown.js';
import { CODE_CACHE_FOLDER } from '../src/boot/code-cache.js';
import { readStartScript } from '../scripts/start-script.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5000);
const CHECKOUT = join(import.meta.dirname, '..');
const PROBE = join(import.meta.dirname, 'heap-probe.mjs');
const GIVE_UP_MS = 60_000;
const MB = 1024 * 1024;

const BARE_PING = `require('node:http').createServer((q, s) => s.end('pong')).listen(Number(process.env.PORT), '127.0.0.1')`;

interface Starter {
  label: string;
  args: string[];
}

/** One reading, in bytes. */
type Reading = Record<string, number>;

interface HeapProbe {
  heapPhysical: number;
  heapUsed: number;
  external: number;
  bytecode: number;
  machineCode: number;
  spaces: Record<string, number>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

function statusKb(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/**
 * Starts `starter` in a fresh directory, waits for `/ping` and SETTLE_MS, runs `read` on the
 * process, and stops it.
 */
async function whileRunning<T>(
  starter: Starter,
  extraEnv: Record<string, string>,
  read: (child: ChildProcess, pid: number) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-start-memory-'));
  const port = await freePort();
  const child = spawn(process.execPath, starter.args, {
    cwd: dir,
    env: {
      ...process.env,
      ...extraEnv,
      PORT: String(port),
      CORE_ADDRESS: `127.0.0.1:${port}`,
      CORE_CONFIGFILE: join(dir, 'config.json'),
      CORE_DB_DIR: join(dir, 'db'),
      CORE_STORAGE_DISK_DIR: join(dir, 'data'),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.on('exit', () => ((exited = true), resolve())));
  try {
    const deadline = Date.now() + GIVE_UP_MS;
    while (!(await pingOnce(port))) {
      if (exited) throw new Error(`${starter.label} exited before answering: ${stderr}`);
      if (Date.now() > deadline) throw new Error(`${starter.label} did not answer`);
      await sleep(10);
    }
    await sleep(SETTLE_MS);
    return await read(child, child.pid!);
  } finally {
    if (!exited) child.kill('SIGTERM');
    await exit;
    await rm(dir, { recursive: true, force: true });
  }
}

function readRss(pid: number): Reading {
  const split = rssBreakdown(pid);
  return {
    rss: statusKb(pid, 'VmRSS'),
    files: statusKb(pid, 'RssFile'),
    anonymous: statusKb(pid, 'RssAnon'),
    'main malloc arena': split.mainArena,
    'thread malloc arenas': split.threadArenas,
    'JIT code': split.executable,
    'other anonymous': split.otherAnonymous,
  };
}

async function readProbe(child: ChildProcess, out: string): Promise<Reading> {
  rmSync(out, { force: true });
  child.kill('SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (!existsSync(out)) {
    if (Date.now() > deadline) throw new Error('the heap probe did not answer');
    await sleep(20);
  }
  await sleep(50); // written in one call; let it finish
  const probe = JSON.parse(readFileSync(out, 'utf8')) as HeapProbe;
  const spaces = Object.fromEntries(
    Object.entries(probe.spaces).map(([name, bytes]) => [`  ${name.replace(/_space$/, '')}`, bytes]),
  );
  return {
    'V8 heap, resident': probe.heapPhysical,
    ...spaces,
    'V8 heap, used': probe.heapUsed,
    '  of which bytecode': probe.bytecode,
    '  of which machine code': probe.machineCode,
    'external (Buffers)': probe.external,
  };
}

function record(table: Map<string, Map<string, number[]>>, label: string, reading: Reading): void {
  const rows = table.get(label) ?? new Map<string, number[]>();
  for (const [name, bytes] of Object.entries(reading)) rows.set(name, [...(rows.get(name) ?? []), bytes]);
  table.set(label, rows);
}

function printTable(title: string, table: Map<string, Map<string, number[]>>, labels: string[]): void {
  const [server, bare] = labels as [string, string];
  const names = [...(table.get(server)?.keys() ?? [])];
  const mb = (bytes: number | undefined): string => (bytes === undefined ? '' : (bytes / MB).toFixed(1));
  console.log(`| ${title.padEnd(28)} | streamcore MB | bare node MB | difference MB |`);
  console.log(`| ${'-'.repeat(28)} | ------------: | -----------: | ------------: |`);
  for (const name of names) {
    const ours = median(table.get(server)!.get(name)!);
    const floorValues = table.get(bare)?.get(name);
    const floor = floorValues === undefined ? undefined : median(floorValues);
    const difference = floor === undefined ? undefined : ours - floor;
    console.log(
      `| ${name.padEnd(28)} | ${mb(ours).padStart(13)} | ${mb(floor).padStart(12)} | ${mb(difference).padStart(13)} |`,
    );
  }
}

function cacheFiles(): Set<string> {
  try {
    return new Set(readdirSync(join(CHECKOUT, 'dist', CODE_CACHE_FOLDER)));
  } catch {
    return new Set();
  }
}

async function main(): Promise<void> {
  const script = readStartScript();
  const entry = join(CHECKOUT, script.entry);
  if (!existsSync(entry)) throw new Error(`${script.entry} is missing: npm run build first`);
  const server: Starter = { label: script.text, args: [...script.flags, entry] };
  const bare: Starter = { label: 'bare node:http', args: [...script.flags, '-e', BARE_PING] };
  const probeOut = join(tmpdir(), `streamcore-heap-probe-${process.pid}.json`);
  const probeEnv = { HEAP_PROBE_OUT: probeOut };
  const probed = (starter: Starter): Starter => ({
    label: starter.label,
    args: ['--import', PROBE, ...starter.args],
  });

  const cachesBefore = cacheFiles();
  // Writes the code cache for the probe's flags (see the header); not measured.
  await whileRunning(probed(server), probeEnv, () => Promise.resolve());
  const rss = new Map<string, Map<string, number[]>>();
  const heap = new Map<string, Map<string, number[]>>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const starter of [server, bare]) {
        record(
          rss,
          starter.label,
          await whileRunning(starter, {}, (_child, pid) => Promise.resolve(readRss(pid))),
        );
        record(
          heap,
          starter.label,
          await whileRunning(probed(starter), probeEnv, (child) => readProbe(child, probeOut)),
        );
      }
    }
  } finally {
    for (const file of cacheFiles()) {
      if (!cachesBefore.has(file)) rmSync(join(CHECKOUT, 'dist', CODE_CACHE_FOLDER, file), { force: true });
    }
    rmSync(probeOut, { force: true });
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `memory at start, ${SETTLE_MS} ms after /ping first answers; ${ROUNDS} rounds, medians (node ${process.version}, load average ${load})`,
  );
  console.log(`streamcore: ${server.label}; bare: node ${script.flags.join(' ')} -e <node:http /ping>`);
  console.log('');
  printTable('resident (RSS)', rss, [server.label, bare.label]);
  console.log('');
  printTable('V8 heap (started with probe)', heap, [server.label, bare.label]);
}

await main();
