import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { authConfig, PASSWORD, USERNAME } from '../auth/support.js';
import { playHls } from '../session/hls-player.js';
import { launchBrowser } from './browser.js';
import { apiClient, buildIntoTemp, eventuallyEqual, latestValue, type ApiCall } from './support.js';

/** Set DASHBOARD_SCREENSHOTS=<dir> to keep a screenshot of each screen (docs/dashboard.md uses them). */
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS;
const VIEWER = '127.0.0.2';

function hlsProcess(id: string): Record<string, unknown> {
  return {
    id,
    reference: 'dashboard test',
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [
      {
        id: 'hls',
        address: '{memfs}/{processid}.m3u8',
        options: [
          ...['-codec:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-b:v', '150k'],
          ...[
            '-f',
            'hls',
            '-hls_time',
            '1',
            '-hls_list_size',
            '4',
            '-hls_flags',
            'delete_segments',
            '-method',
            'PUT',
          ],
        ],
      },
    ],
    options: ['-loglevel', 'info'],
    autostart: true,
  };
}

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against the real
 * server with a real ffmpeg process and a simulated HLS viewer: what each screen shows must be
 * what the API answers.
 */
describe('dashboard in a browser', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let call: ApiCall;
  const viewer = new AbortController();

  before(async () => {
    const dashboardDir = await buildIntoTemp();
    server = await startServer({
      dashboardDir,
      config: {
        ...authConfig({ throttle: { delay_ms: 5 } }),
        metrics: { enable: true, interval_sec: 1, range_sec: 300 },
        sessions: { session_timeout_sec: 5 },
      },
    });
    call = await apiClient(server, USERNAME, PASSWORD);
    await call('POST', '/api/v3/process', hlsProcess('cam1'));
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  after(async () => {
    viewer.abort();
    await browser?.close();
    await server?.close();
  });

  async function screenshot(name: string): Promise<void> {
    if (SCREENSHOTS === undefined) return;
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  const text = (selector: string) => () =>
    page
      .locator(selector)
      .first()
      .textContent({ timeout: 5000 })
      .catch(() => null);

  it('shows the server message for a wrong password, then logs in', async () => {
    await page.goto(`${server.url}/dashboard/`);
    await page.fill('#username', USERNAME);
    await page.fill('#password', 'wrong password');
    await page.click('button[type=submit]');
    await page.locator('.login .message', { hasText: 'Unauthorized' }).waitFor();
    const message = await page.locator('.login .message').textContent();
    assert.match(message ?? '', /Unauthorized: Invalid authorization credentials/);
    await screenshot('login');

    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.locator('header nav').waitFor();
  });

  it('overview: host figures and process states match the API', async () => {
    await page.goto(`${server.url}/dashboard/#/overview`);
    await eventuallyEqual(
      text('[data-stat=ncpu]'),
      async () => String((await latestValue(call, 'cpu_ncpu'))?.toFixed(1)),
      'CPUs',
    );
    await eventuallyEqual(
      text('[data-stat=state-running]'),
      async () => String(await latestValue(call, 'restream_state', { state: 'running' })),
      'running processes',
    );
    assert.ok((await page.locator('figure.chart canvas').count()) >= 4, 'four charts are drawn');
    await screenshot('overview');
  });

  it('processes: the list matches the API, and a process created meanwhile appears', async () => {
    await page.goto(`${server.url}/dashboard/#/processes`);
    await eventuallyEqual(
      text('tr[data-process=cam1] [data-field=state]'),
      async () =>
        (await call<{ state: { exec: string } }>('GET', '/api/v3/process/cam1?filter=state')).state.exec,
      'state of cam1',
    );
    await call('POST', '/api/v3/process', {
      id: 'late-one',
      input: [{ id: 'in', address: 'testsrc=size=32x24:rate=5', options: ['-re', '-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      autostart: false,
    });
    await page.locator('tr[data-process=late-one]').waitFor({ timeout: 15_000 });
    assert.equal(
      await page.locator('tr[data-process=late-one] [data-field=state]').textContent(),
      'finished',
    );
    await screenshot('processes');

    await page.click('tr[data-process=cam1] a');
    await page.locator('.process-detail h2').waitFor();
    await page.locator('.log', { hasText: /\S/ }).waitFor({ timeout: 15_000 });
    const report = await call<{ log: [string, string][] }>('GET', '/api/v3/process/cam1/report');
    const shownLog = (await page.locator('.log').textContent()) ?? '';
    assert.ok(report.log.length > 0);
    assert.ok(shownLog.includes(report.log[0]![1]), 'the detail view shows the process log lines');
    await screenshot('process-detail');
  });

  it('viewers: active HLS sessions match the API', async () => {
    void playHls(`${server.url}/memfs/cam1.m3u8`, { localAddress: VIEWER, signal: viewer.signal });
    await page.goto(`${server.url}/dashboard/#/viewers`);
    // First the viewer must be counted, so that 0 = 0 cannot pass for a page that shows nothing.
    const deadline = Date.now() + 30_000;
    while (((await latestValue(call, 'session_active', { collector: 'hls' })) ?? 0) < 1) {
      assert.ok(Date.now() < deadline, 'the simulated viewer becomes an active HLS session');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await eventuallyEqual(
      text('tr[data-collector=hls] [data-field=active]'),
      async () => String(await latestValue(call, 'session_active', { collector: 'hls' })),
      'active HLS sessions',
      30_000,
    );
    const active = await page.locator('tr[data-collector=hls] [data-field=active]').textContent();
    assert.notEqual(active, '0', 'the viewer is counted');
    await screenshot('viewers');
  });

  it('storage: the memory filesystem figures match the API', async () => {
    await page.goto(`${server.url}/dashboard/#/storage`);
    await eventuallyEqual(
      async () => {
        const shown = await text('[data-meter=memfs] [data-field=usage]')();
        return shown === null ? null : (/· (\d+) files/.exec(shown)?.[1] ?? null);
      },
      async () => String(await latestValue(call, 'filesystem_files', { name: 'memfs' })),
      'memfs files',
    );
    await screenshot('storage');
  });

  it('the range picker changes the query', async () => {
    await page.goto(`${server.url}/dashboard/#/overview`);
    const asked = page.waitForRequest(
      (request) =>
        request.url().endsWith('/api/v3/metrics') &&
        (request.postData() ?? '').includes('"timerange_sec":86400'),
    );
    await page.click('button[data-range="24h"]');
    const request = await asked;
    const body = JSON.parse(request.postData()!) as { interval_sec: number };
    assert.equal(body.interval_sec, 300, '24 h is drawn in 5-minute steps');
    assert.equal(await page.locator('button[data-range="24h"]').getAttribute('aria-pressed'), 'true');
  });
});

describe('dashboard session handling', () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({
      dashboardDir: await buildIntoTemp(),
      config: {
        ...authConfig({ jwt: { access_ttl_sec: 1, refresh_ttl_sec: 3 } }),
        metrics: { enable: true, interval_sec: 1, range_sec: 60 },
      },
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('returns to the login form when the session expires', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${server.url}/dashboard/`);
    await page.fill('#username', USERNAME);
    await page.fill('#password', PASSWORD);
    await page.click('button[type=submit]');
    await page.locator('header nav').waitFor();
    // The access token (1 s) is refreshed until the refresh token (3 s) expires; then the form is back.
    await page.locator('form.login').waitFor({ timeout: 20_000 });
    assert.match((await page.locator('.login .message').textContent()) ?? '', /session has ended/);
  });

  it('works without login when auth is off', async () => {
    const open = await startServer({
      dashboardDir: await buildIntoTemp(),
      config: { metrics: { enable: true, interval_sec: 1 } },
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${open.url}/dashboard/`);
      await page.locator('header nav').waitFor();
      assert.equal(await page.locator('button.logout').count(), 0);
      assert.equal(await page.locator('form.login').count(), 0);
    } finally {
      await open.close();
    }
  });
});
