import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDashboard } from '../../scripts/build-dashboard.js';
import type { TestServer } from '../helpers/server.js';

/** Builds the page with the real build script into a directory of the test's own. */
export async function buildIntoTemp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-dashboard-'));
  await buildDashboard(dir);
  return dir;
}

/** A logged-in API client for the test's own checks (the page logs in by itself). */
export async function apiClient(server: TestServer, username: string, password: string) {
  const login = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  assert.equal(login.status, 200, await login.clone().text());
  const { access_token: token } = (await login.json()) as { access_token: string };
  return async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
}

export type ApiCall = Awaited<ReturnType<typeof apiClient>>;

interface MetricsAnswer {
  metrics: { name: string; labels: Record<string, string>; values: [number, number][] }[];
}

/** The latest value of one series, from the API. */
export async function latestValue(
  call: ApiCall,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const answer = await call<MetricsAnswer>('POST', '/api/v3/metrics', {
    metrics: [{ name, labels: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, `^${v}$`])) }],
  });
  return answer.metrics[0]?.values.at(-1)?.[1];
}

/**
 * Polls until what the page shows equals what the API says (both read again each round), so a
 * value that changes between the two reads does not fail the test; fails with both after the time-out.
 */
export async function eventuallyEqual(
  shown: () => Promise<string | null>,
  expected: () => Promise<string>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: [string | null, string] = [null, ''];
  while (Date.now() < deadline) {
    last = [await shown(), await expected()];
    if (last[0] !== null && last[0].trim() === last[1]) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.fail(`${what}: the page shows ${JSON.stringify(last[0])}, the API says ${JSON.stringify(last[1])}`);
}
