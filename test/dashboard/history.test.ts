import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { MetricHistory } from '../../src/monitor/history/index.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { formatBytes, formatNumber } from '../../web/dashboard/src/format.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser } from './browser.js';
import { buildIntoTemp, eventuallyEqual } from './support.js';

const COLLECTORS = ['hls', 'hlsingress', 'http', 'rtmp', 'srt'];
const DAY_MS = 86_400_000;

interface Answer {
  metrics: { name: string; labels: Record<string, string>; values: [number, number][] }[];
}

/**
 * Three days of HLS viewer counters written into the server's history before it starts (every
 * 5 minutes: 2 more sessions and 1 MB more sent), as a server that ran then would have left them.
 */
async function writePastDays(dir: string, nowMs: number): Promise<void> {
  const history = new MetricHistory({
    dir,
    minuteRetentionDays: 7,
    hourRetentionDays: 400,
    maxSizeBytes: 0,
    logger: pino({ level: 'silent' }),
  });
  await history.load();
  const store = new MetricStore(1);
  const total = store.intern(METRIC_INDEX.get('session_total')!, ['hls']);
  const sent = store.intern(METRIC_INDEX.get('session_txbytes')!, ['hls']);
  const start = nowMs - 3 * DAY_MS;
  for (let t = start, k = 1; t < nowMs - 10 * 60_000; t += 5 * 60_000, k++) {
    const batch = new SampleBatch();
    batch.add(total, 2 * k);
    batch.add(sent, 1_000_000 * k);
    store.commit(t, batch);
    history.ingest(t, batch, store);
  }
  await history.close();
}

/** Day label in this machine's zone (the browser runs in the same one), as the page writes it. */
function dayLabel(timeSec: number): string {
  const date = new Date(timeSec * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Growth per day of a counter (a drop is a restart: growth from zero), from the API's points. */
function perDay(values: [number, number][]): Map<string, number> {
  const totals = new Map<string, number>();
  for (let i = 1; i < values.length; i++) {
    const [, v0] = values[i - 1]!;
    const [t1, v1] = values[i]!;
    const label = dayLabel(t1);
    totals.set(label, (totals.get(label) ?? 0) + (v1 >= v0 ? v1 - v0 : v1));
  }
  return totals;
}

/**
 * The dashboard's long ranges come from the metric history through `POST /api/v3/metrics`: the
 * Viewers view's totals per day, over 30 days, show days the server was not even running.
 */
describe('dashboard: long ranges from the metric history', () => {
  let server: TestServer;
  let browser: Browser;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dashboard-history-'));
    await writePastDays(join(dir, 'db', 'metrics'), Date.now());
    server = await startServer({
      dir,
      dashboardDir: await buildIntoTemp(),
      config: { metrics: { enable: true, interval_sec: 1, range_sec: 60 } },
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function expectedDays(): Promise<string> {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        timerange_sec: 30 * 86_400,
        interval_sec: 3600,
        metrics: [{ name: 'session_total' }, { name: 'session_txbytes' }],
      }),
    });
    const answer = (await response.json()) as Answer;
    const of = (name: string, collector: string) =>
      perDay(answer.metrics.find((s) => s.name === name && s.labels.collector === collector)?.values ?? []);
    const sessions = COLLECTORS.map((c) => of('session_total', c));
    const sent = COLLECTORS.map((c) => of('session_txbytes', c));
    const labels = [...new Set(sessions.flatMap((m) => [...m.keys()]))].sort().reverse();
    const rows = labels.map((label) => [
      label,
      ...COLLECTORS.map(
        (_, i) => `${formatNumber(sessions[i]!.get(label) ?? 0)} / ${formatBytes(sent[i]!.get(label) ?? 0)}`,
      ),
    ]);
    return JSON.stringify(rows);
  }

  it('shows the totals per day of the past days as the API answers them', async () => {
    const expected = JSON.parse(await expectedDays()) as string[][];
    // The history reached the answer: three past days with HLS sessions in them.
    const withSessions = expected.filter((row) => !row[1]!.startsWith('0 '));
    assert.ok(withSessions.length >= 3, JSON.stringify(expected));
    const page = await browser.newPage();
    await page.goto(`${server.url}/dashboard/#/viewers`);
    await eventuallyEqual(
      async () => {
        const rows: string[][] = [];
        for (const row of await page.locator('[data-table=viewers-days] tbody tr').all())
          rows.push((await row.locator('th, td').allTextContents()).map((cell) => cell.trim()));
        return rows.length === 0 ? null : JSON.stringify(rows);
      },
      expectedDays,
      'totals per day',
      30_000,
    );
    const months = await page.locator('[data-table=viewers-months] tbody tr').count();
    assert.ok(months >= 1, 'the totals per month are filled too');
  });
});
