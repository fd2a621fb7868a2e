/**
 * wrk (Debian's `wrk`, C and epoll) as the load generator: per request it costs a fraction of the
 * CPU autocannon (JavaScript) does, which matters where the load shares the machine's cores with
 * the server being measured (bench/scaling.ts). The request is set by a Lua script written to a
 * temporary file; the script's `done` prints the summary as one JSON line, and the shell that ran
 * wrk prints its own /proc stat afterwards, whose children's times are wrk's CPU.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLOCK_TICKS_PER_SEC, procStatFields } from './measure.js';

export interface WrkRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface WrkRun {
  connections: number;
  threads: number;
  durationSec: number;
  /** CPUs wrk may run on (taskset list, `0` or `0,1`). */
  cpus: string;
  /** wrk's niceness, 0 (the server's own priority) to 19 (the server first); 0 by default. */
  nice?: number;
}

export interface WrkResult {
  rps: number;
  requests: number;
  /** Non-2xx/3xx answers plus connect, read, write errors and time-outs. */
  failed: number;
  /** wrk's own CPU time per request, µs (user + system). */
  loadMicrosPerRequest: number;
}

/** Whether wrk is on PATH. */
export async function haveWrk(): Promise<boolean> {
  return new Promise((resolve) =>
    execFile('wrk', ['--version'], (error) => resolve(error === null || error.code === 1)),
  );
}

function luaString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function script(request: WrkRequest): string {
  const lines = [`wrk.method = ${luaString(request.method ?? 'GET')}`];
  if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`);
  for (const [name, value] of Object.entries(request.headers ?? {}))
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK {"requests":%d,"duration_us":%d,"status":%d,"socket":%d}\\n\',',
    '    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

export async function runWrk(request: WrkRequest, run: WrkRun): Promise<WrkResult> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-wrk-'));
  try {
    const scriptFile = join(dir, 'request.lua');
    await writeFile(scriptFile, script(request));
    const args = [
      '-c',
      'nice -n "$7" taskset -c "$1" wrk -t "$2" -c "$3" -d "$4" -s "$5" "$6" >&2 && cat /proc/$$/stat',
      'sh',
      run.cpus,
      String(run.threads),
      String(run.connections),
      `${run.durationSec}s`,
      scriptFile,
      request.url,
      String(run.nice ?? 0),
    ];
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile('sh', args, (error, out, err) =>
        error === null ? resolve({ stdout: out, stderr: err }) : reject(new Error(`wrk failed: ${err}`)),
      ),
    );
    const line = stderr.split('\n').find((each) => each.startsWith('WRK '));
    if (line === undefined) throw new Error(`wrk printed no summary: ${stderr}`);
    const summary = JSON.parse(line.slice(4)) as {
      requests: number;
      duration_us: number;
      status: number;
      socket: number;
    };
    // Fields after the command name: cutime and cstime (the waited-for children, wrk) are 14th and 15th.
    const fields = procStatFields(stdout);
    const loadTicks = Number(fields[13]) + Number(fields[14]);
    return {
      rps: summary.requests / (summary.duration_us / 1_000_000),
      requests: summary.requests,
      failed: summary.status + summary.socket,
      loadMicrosPerRequest: (loadTicks * 1_000_000) / CLOCK_TICKS_PER_SEC / Math.max(1, summary.requests),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
