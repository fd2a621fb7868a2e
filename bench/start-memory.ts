/**
 * Memory at start (issue 31 item 3): the RSS of the server right after it has started, before
 * any process runs, next to bare Node's floor (a `node:http` server answering `/ping`), and where
 * it is.
 *
 * Method: each round starts, one after the other, the server as `npm start` runs it (`node [the
 * start script's flags] dist/main.js`, read from package.json, in a fresh directory for config, db
 * and storage: a first start) and the bare server (same Node flags). Each is read SETTLE_MS
 * (default 5 s) after `/ping` first answers: VmRSS, RssAnon, RssFile from /proc/<pid>/status and
 * bench/rss-breakdown.ts's split of the anonymous part. Then each is started a second time with a
 * probe (`--import`, HEAP_PROBE below), which reports V8's heap (resident size, bytes used,
 * bytecode, machine code, per space) on SIGUSR2: that is the heap's share of the RSS above. The
 * probe adds a flag, and V8 accepts a code cache only under the flags that wrote it
 * (src/boot/code-cache.ts), so one unmeasured start with the probe first writes the cache it then
 * reads; that cache file is removed at the end. ROUNDS rounds (default 5), medians (the machine
 * may be busy: memory at start moves less with load than time does, but still by a MB or two).
 * BENCH_BEFORE names another
 * build's entry (a copy of an earlier dist/ beside this one, `dist-before/main.js`, so that its
 * relative paths still resolve) to start in the same rounds, for a before/after comparison.
 *
 * Run: npm run build && node --import tsx bench/start-memory.ts   (BENCH_ROUNDS=5, BENCH_SETTLE_MS,
 * BENCH_BEFORE)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, median, pingOnce } from './measure.js';
import { rssBreakdown } from './rss-breakdown.js';
import { CODE_CACHE_FOLDER } from '../src/boot/code-cache.js';
import { readStartScript } from '../scripts/start-script.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5000);
const CHECKOUT = join(import.meta.dirname, '..');
const GIVE_UP_MS = 60_000;
const MB = 1024 * 1024;

/**
 * Loaded with `--import` into a measured server: on SIGUSR2 it writes V8's heap figures as JSON to
 * the file HEAP_PROBE_OUT names. Node's own modules only, so that it adds next to nothing.
 */
const HEAP_PROBE = `import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';
process.on('SIGUSR2', () => {
  const heap = v8.getHeapStatistics();
  const code = v8.getHeapCodeStatistics();
  const spaces = Object.fromEntries(
    v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.physical_space_size]),
  );
  writeFileSync(process.env.HEAP_PROBE_OUT, JSON.stringify({
    heapPhysical: heap.total_physical_size,
    heapUsed: heap.used_heap_size,
    external: process.memoryUsage().external,
    bytecode: code.bytecode_and_metadata_size,
    machineCode: code.code_and_metadata_size,
    spaces,
  }));
});`;

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
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
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
  const floorLabel = labels.at(-1)!;
  const names = [...(table.get(labels[0]!)?.keys() ?? [])];
  const mb = (bytes: number): string => (bytes / MB).toFixed(1);
  const value = (label: string, name: string): number => median(table.get(label)?.get(name) ?? [NaN]);
  const columns = [...labels.map((label) => `${label} MB`), `above ${floorLabel} MB`];
  console.log(`| ${title.padEnd(28)} | ${columns.join(' | ')} |`);
  console.log(
    `| ${'-'.repeat(28)} | ${columns.map((column) => `${'-'.repeat(column.length - 1)}:`).join(' | ')} |`,
  );
  for (const name of names) {
    const cells = labels.map((label) => mb(value(label, name)));
    cells.push(mb(value(labels[0]!, name) - value(floorLabel, name)));
    console.log(
      `| ${name.padEnd(28)} | ${cells.map((cell, i) => cell.padStart(columns[i]!.length)).join(' | ')} |`,
    );
  }
}

/** The code caches of the builds measured (paths). */
function cacheFiles(entries: string[]): Set<string> {
  const files = new Set<string>();
  for (const entry of entries) {
    const folder = join(dirname(entry), CODE_CACHE_FOLDER);
    try {
      for (const name of readdirSync(folder)) files.add(join(folder, name));
    } catch {
      // no cache yet
    }
  }
  return files;
}

async function main(): Promise<void> {
  const script = readStartScript();
  const entry = join(CHECKOUT, script.entry);
  if (!existsSync(entry)) throw new Error(`${script.entry} is missing: npm run build first`);
  const server: Starter = { label: 'streamcore', args: [...script.flags, entry] };
  const before = process.env.BENCH_BEFORE;
  const servers = [server];
  if (before !== undefined)
    servers.push({ label: 'before', args: [...script.flags, join(CHECKOUT, before)] });
  const bare: Starter = { label: 'bare node', args: [...script.flags, '-e', BARE_PING] };
  const starters = [...servers, bare];
  const probeOut = join(tmpdir(), `streamcore-heap-probe-${process.pid}.json`);
  const probeEnv = { HEAP_PROBE_OUT: probeOut };
  const probed = (starter: Starter): Starter => ({
    label: starter.label,
    args: [`--import=data:text/javascript,${encodeURIComponent(HEAP_PROBE)}`, ...starter.args],
  });

  const entries = servers.map((starter) => starter.args.at(-1)!);
  const cachesBefore = cacheFiles(entries);
  // Writes the code cache for the probe's flags (see the header); not measured.
  for (const starter of servers) await whileRunning(probed(starter), probeEnv, () => Promise.resolve());
  const rss = new Map<string, Map<string, number[]>>();
  const heap = new Map<string, Map<string, number[]>>();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const starter of starters) {
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
    for (const file of cacheFiles(entries)) {
      if (!cachesBefore.has(file)) rmSync(file, { force: true });
    }
    rmSync(probeOut, { force: true });
  }
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `memory at start, ${SETTLE_MS} ms after /ping first answers; ${ROUNDS} rounds, medians (node ${process.version}, load average ${load})`,
  );
  console.log(`streamcore: ${script.text}; bare node: node ${script.flags.join(' ')} -e <node:http /ping>`);
  if (before !== undefined) console.log(`before: node ${script.flags.join(' ')} ${before}`);
  console.log('');
  printTable(
    'resident (RSS)',
    rss,
    starters.map((starter) => starter.label),
  );
  console.log('');
  printTable(
    'V8 heap (started with probe)',
    heap,
    starters.map((starter) => starter.label),
  );
}

await main();
