import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server.js';

export const FFMPEG_FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'ffmpeg');

export interface Answer<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** One JSON call to the server's API; the body is parsed when it is JSON. */
export async function call<T = unknown>(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await fetch(`${server.url}/api/v3${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  if ((response.headers.get('content-type') ?? '').startsWith('application/json') && text !== '') {
    parsed = JSON.parse(text);
  }
  return { status: response.status, body: parsed as T, text };
}

/** Like `call`, and asserts the status. */
export async function ok<T = unknown>(
  server: TestServer,
  method: string,
  path: string,
  body?: unknown,
  status = 200,
): Promise<T> {
  const answer = await call<T>(server, method, path, body);
  assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
  return answer.body;
}

/** A small process: a lavfi test picture (`-re`, so it runs in real time) to the null muxer. */
export function lavfiProcess(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    options: ['-loglevel', 'info'],
    autostart: false,
    ...extra,
  };
}

export interface ProcessState {
  order: string;
  exec: string;
  runtime_seconds: number;
  reconnect_seconds: number;
  last_logline: string;
  progress: {
    frame: number;
    fps: number;
    size_kb: number;
    inputs: Record<string, unknown>[];
    outputs: Record<string, unknown>[];
  };
  memory_bytes: number;
  cpu_usage: number;
  command: string[];
  pid: number;
}

export interface ProcessReport {
  created_at: number;
  prelude: string[];
  log: [string, string][];
  history: {
    created_at: number;
    prelude: string[];
    log: [string, string][];
    exited_at: number;
    exit_state: string;
  }[];
}

export function getState(server: TestServer, id: string): Promise<ProcessState> {
  return ok<ProcessState>(server, 'GET', `/process/${encodeURIComponent(id)}/state`);
}

export function getReport(server: TestServer, id: string): Promise<ProcessReport> {
  return ok<ProcessReport>(server, 'GET', `/process/${encodeURIComponent(id)}/report`);
}

/** Polls `probe` until it returns something other than `undefined`/`false`, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    last = value;
    if (Date.now() > deadline)
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await sleep(200);
  }
}

/** Waits until the process is in `exec` state (and, when given, has `minFrames` frames). */
export function waitForState(
  server: TestServer,
  id: string,
  exec: string,
  timeoutMs = 15_000,
  minFrames = 0,
): Promise<ProcessState> {
  return waitFor(
    async () => {
      const state = await getState(server, id);
      return state.exec === exec && state.progress.frame >= minFrames ? state : undefined;
    },
    timeoutMs,
    `process ${id} to be ${exec}${minFrames > 0 ? ` with ${minFrames} frames` : ''}`,
  );
}

/**
 * A running encoder's argv, as any local user reads it (`/proc/<pid>/cmdline`). A state read just
 * as a run ends names a pid whose cmdline is already empty (a zombie): read again until a run's
 * cmdline is there.
 */
export async function runningCommandLine(server: TestServer, id: string): Promise<string[]> {
  return waitFor(
    async () => {
      const { pid } = await waitForState(server, id, 'running', 20_000);
      const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
      return args.length > 1 ? args : undefined;
    },
    20_000,
    `the cmdline of a running ${id}`,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
