import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { authConfig, loginPair, PASSWORD, USERNAME } from '../auth/support.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser } from './browser.js';
import { buildIntoTemp } from './support.js';

const MEMFS_USER = 'publisher';
const MEMFS_PASSWORD = 'memfs password 123';

/**
 * The attacker's page: looks for a token wherever a page of the same origin could find one (the
 * tab's sessionStorage and localStorage, cookies), then calls the config route with it, and once
 * more with whatever credentials the browser would add on its own. Leaves its findings in
 * `window.findings`.
 */
const EVIL_PAGE = `<!doctype html><title>evil</title><script>
(async () => {
  const findings = { token: '', storage: '', statuses: [] };
  const jwt = /eyJ[\\w-]+\\.[\\w-]+\\.[\\w-]+/;
  for (const name of ['sessionStorage', 'localStorage']) {
    try {
      const store = window[name];
      for (let i = 0; i < store.length; i++) {
        const match = jwt.exec(store.getItem(store.key(i)) || '');
        if (match) findings.token = match[0];
      }
      findings.storage += name + ': readable; ';
    } catch (error) {
      findings.storage += name + ': ' + error.name + '; ';
    }
  }
  try {
    const match = jwt.exec(document.cookie);
    if (match) findings.token = match[0];
  } catch {}
  const attempts = [{ credentials: 'include' }];
  if (findings.token) attempts.push({ headers: { authorization: 'Bearer ' + findings.token } });
  for (const init of attempts) {
    findings.statuses.push(await fetch('/api/v3/config', init).then((r) => r.status, () => 'blocked'));
  }
  window.findings = findings;
})();
</script>`;

/**
 * A page like the Restreamer UI's player site: a classic script from the disk, then fetches of a
 * live playlist in memfs, a JSON file on the disk and the public widget route.
 */
const PLAYER_PAGE = `<!doctype html><title>player</title><script src="player/config.js"></script><script>
(async () => {
  const read = (url) => fetch(url).then(async (r) => ({ status: r.status, text: await r.text() }), (e) => ({ status: 'blocked', text: String(e) }));
  window.player = {
    config: window.playerConfig,
    playlist: await read('/memfs/live.m3u8'),
    json: await read('channels/live/config.json'),
    widget: await read('api/v3/widget/process/none'),
  };
})();
</script>`;

interface Findings {
  token: string;
  storage: string;
  statuses: (number | string)[];
}

interface Read {
  status: number | string;
  text: string;
}

async function putMemfs(server: TestServer, path: string, body: string): Promise<void> {
  const response = await fetch(`${server.url}/memfs/${path}`, {
    method: 'PUT',
    headers: { authorization: `Basic ${Buffer.from(`${MEMFS_USER}:${MEMFS_PASSWORD}`).toString('base64')}` },
    body,
  });
  assert.ok(response.status === 201 || response.status === 204, `PUT /memfs/${path}: ${response.status}`);
}

async function putDisk(server: TestServer, token: string, path: string, body: string): Promise<void> {
  const response = await fetch(`${server.url}/api/v3/fs/disk/${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}` },
    body,
  });
  assert.ok(response.status === 201 || response.status === 204, `PUT disk ${path}: ${response.status}`);
}

async function loginToDashboard(page: Page, server: TestServer): Promise<void> {
  await page.goto(`${server.url}/dashboard/`);
  await page.fill('#username', USERNAME);
  await page.fill('#password', PASSWORD);
  await page.click('button[type=submit]');
  await page.locator('header nav').waitFor();
}

/** Waits (deadline) for the page's script to leave its result in `window[name]`. */
async function resultOf<T>(page: Page, name: string): Promise<T> {
  // Strings: the tests are not compiled with the DOM library.
  const expression = `window[${JSON.stringify(name)}]`;
  await page.waitForFunction(`${expression} !== undefined`, undefined, { timeout: 15_000 });
  return page.evaluate<T>(expression);
}

describe('an uploaded file cannot act as the dashboard (issue 24 item 5)', () => {
  let server: TestServer;
  let browser: Browser;
  let token: string;

  before(async () => {
    server = await startServer({
      dashboardDir: await buildIntoTemp(),
      config: {
        ...authConfig(),
        storage: { memory: { auth: { enable: true, username: MEMFS_USER, password: MEMFS_PASSWORD } } },
      },
    });
    ({ access_token: token } = await loginPair(server.url));
    await putMemfs(server, 'evil.html', EVIL_PAGE);
    await putDisk(server, token, 'evil.html', EVIL_PAGE);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const [where, path] of [
    ['memfs', '/memfs/evil.html'],
    ['the disk', '/evil.html'],
  ] as const) {
    it(`a page from ${where}, opened in the dashboard's tab, finds no token and gets no config`, async () => {
      const page = await browser.newPage();
      try {
        await loginToDashboard(page, server);
        await page.goto(`${server.url}${path}`);
        const findings = await resultOf<Findings>(page, 'findings');
        assert.equal(findings.token, '', `found a token (${findings.storage})`);
        // Two layers: the dashboard keeps no token there, and the sandbox keeps the page out anyway.
        assert.match(findings.storage, /sessionStorage: SecurityError; localStorage: SecurityError/);
        assert.ok(
          findings.statuses.every((status) => status !== 200),
          `GET /api/v3/config answered ${findings.statuses.join(', ')}`,
        );
      } finally {
        await page.close();
      }
    });
  }

  it('a player page on the disk still runs its scripts and reads playlists, JSON and the widget', async () => {
    await putMemfs(server, 'live.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:2\n');
    await putDisk(server, token, 'player/config.js', 'window.playerConfig = { autoplay: false };');
    await putDisk(server, token, 'channels/live/config.json', '{"channel":"live"}');
    await putDisk(server, token, 'player.html', PLAYER_PAGE);
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/player.html`);
      const player = await resultOf<{ config: unknown; playlist: Read; json: Read; widget: Read }>(
        page,
        'player',
      );
      assert.deepEqual(player.config, { autoplay: false });
      assert.equal(player.playlist.status, 200, player.playlist.text);
      assert.match(player.playlist.text, /^#EXTM3U/);
      assert.deepEqual(player.json, { status: 200, text: '{"channel":"live"}' });
      assert.equal(player.widget.status, 404, player.widget.text);
    } finally {
      await page.close();
    }
  });
});

describe('the dashboard keeps its tokens in memory', () => {
  it('logs in, holds nothing in web storage, and asks again after a reload', async () => {
    const server = await startServer({ dashboardDir: await buildIntoTemp(), config: authConfig() });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await loginToDashboard(page, server);
      // A string: the tests are not compiled with the DOM library.
      const stored = await page.evaluate<string>(
        'JSON.stringify([{ ...sessionStorage }, { ...localStorage }, document.cookie])',
      );
      assert.doesNotMatch(stored, /eyJ/, 'no token in sessionStorage, localStorage or cookies');
      await page.reload();
      await page.locator('form.login').waitFor();
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
