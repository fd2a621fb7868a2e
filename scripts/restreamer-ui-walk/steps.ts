import type { Page } from 'playwright-core';
import type { Recorder } from './recorder.js';

export interface WalkContext {
  page: Page;
  uiUrl: string;
  coreUrl: string;
  username: string;
  password: string;
  shotDir: string;
  recorder: Recorder;
  /** The network source the wizard probes (an HLS stream the server can reach). */
  sourceUrl: string;
  /** rtmp://host:port of an RTMP server the publication step pushes to. */
  rtmpHost: string;
}

export interface WalkStep {
  name: string;
  /** Screenshot file name (without .png), taken after the step whether it passed or not. */
  file: string;
  /** Does the step; answers what it saw, throws when the screen does not work. */
  run(context: WalkContext): Promise<string>;
}

async function loginScreen({ page, uiUrl, coreUrl }: WalkContext): Promise<string> {
  await page.goto(`${uiUrl}/?address=${encodeURIComponent(coreUrl)}`);
  await page.getByLabel('Username').waitFor();
  return 'the login form';
}

async function login({ page, username, password }: WalkContext): Promise<string> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: /login/i }).click();
  await page
    .getByText(/welcome to restreamer|livestream/i)
    .first()
    .waitFor({ timeout: 30_000 });
  return `logged in, at ${new URL(page.url()).hash}`;
}

async function shot(context: WalkContext, name: string): Promise<void> {
  await context.page.screenshot({ path: `${context.shotDir}/${name}.png`, fullPage: true });
}

async function wizard(context: WalkContext): Promise<string> {
  const { page } = context;
  const welcome = page.getByRole('button', { name: /next: video setup/i });
  if (await welcome.isVisible()) {
    await welcome.click();
  } else {
    // A server that has a channel already: open the wizard of the selected one.
    await page.goto(`${page.url().replace(/\/+$/, '')}/edit/wizard`);
  }
  await page.getByRole('button', { name: 'Network source' }).click();
  await shot(context, '03a-wizard-sources');
  await page.getByLabel('Address').fill(context.sourceUrl);
  await shot(context, '03b-wizard-network');
  const next = page.getByRole('button', { name: /^next$/i });
  await next.click();
  await shot(context, '03c-wizard-probing');
  const verdict = page.getByText(
    /select the desired resolution|failed to verify|no live stream|doesn't provide/i,
  );
  await verdict.first().waitFor({ timeout: 60_000 });
  await shot(context, '03d-wizard-probed');
  const said = (await verdict.first().textContent()) ?? '';
  if (!/compatible/i.test(said)) throw new Error(`the probe says: ${said}`);
  const profile = (await page.getByRole('combobox').first().textContent()) ?? '';
  await next.click();
  await page.getByText('Audio setup').waitFor();
  await shot(context, '03e-wizard-audio');
  await next.click();
  await page.getByText('Metadata', { exact: true }).waitFor();
  await next.click();
  await page.getByText('License', { exact: true }).waitFor();
  await page.getByRole('button', { name: /^save$/i }).click();
  await page.getByText(/channel saved/i).waitFor({ timeout: 30_000 });
  return `probe: "${said.trim()}", profile ${profile.trim()}; channel saved`;
}

/** Fetches an HLS playlist twice, some seconds apart, and checks that it answers and moves on. */
async function playlistGrows(url: string): Promise<string> {
  const variant = (await read(url)).find((entry) => /\.m3u8(\?|$)/.test(entry));
  if (variant !== undefined) {
    return `master ${url} names ${variant}; ${await playlistGrows(new URL(variant, url).href)}`;
  }
  const first = await read(url);
  await new Promise((done) => setTimeout(done, 6000));
  const second = await read(url);
  const fresh = second.filter((entry) => !first.includes(entry));
  if (fresh.length === 0) throw new Error(`${url} did not change in 6 s (${second.join(' ')})`);
  return `${url}: ${second.length} entries, ${fresh.length} new in 6 s`;
}

/** The URI lines of a playlist. */
async function read(url: string): Promise<string[]> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return (await response.text()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

async function channelPlays(context: WalkContext): Promise<string> {
  const { page } = context;
  const playlists: string[] = [];
  page.on('response', (response) => {
    if (/\.m3u8(\?|$)/.test(response.url()) && response.status() === 200) playlists.push(response.url());
  });
  await page.getByText('Connecting ...').first().waitFor({ state: 'hidden', timeout: 90_000 });
  const video = page.locator('video').first();
  await video.waitFor();
  // Page-side expressions are strings: this project compiles without the DOM library.
  await page.waitForFunction(
    "(v => v !== null && v.currentTime > 2 && !v.paused)(document.querySelector('video'))",
    undefined,
    {
      timeout: 60_000,
    },
  );
  const [uptime, bitrate, fps] = await Promise.all(
    ['Uptime', 'kbit/s', 'FPS'].map(async (label) =>
      (await page.getByText(label, { exact: true }).first().locator('..').textContent())?.replace(label, ''),
    ),
  );
  const playlist = playlists.find((url) => !url.includes('walk-source'));
  if (playlist === undefined)
    throw new Error(`the player loaded no playlist of the channel (${playlists.join(' ')})`);
  const grows = await playlistGrows(playlist);
  const time = await page.evaluate<number>("document.querySelector('video').currentTime");
  return `video playing at ${time.toFixed(1)} s; uptime ${uptime}, ${bitrate} kbit/s, ${fps} fps; ${grows}`;
}

async function publication(context: WalkContext): Promise<string> {
  const { page, coreUrl } = context;
  const main = page.url();
  await page.goto(`${main}/publication`);
  await page.getByText('Add Publication').waitFor();
  await shot(context, '05a-publication-services');
  await page.getByRole('button', { name: 'RTMP', exact: true }).click();
  // The form has the scheme in a select of its own (rtmp:// by default): the address goes without.
  await page.getByLabel('Address').fill(`${context.rtmpHost.replace(/^rtmp:\/\//, '')}/live/walk`);
  await shot(context, '05b-publication-rtmp');
  await page.getByRole('button', { name: /^save$/i }).click();
  await page.waitForURL((url) => /^#\/[0-9a-f-]+\/?$/.test(url.hash), { timeout: 30_000 });
  // A new publication is saved stopped; its switch in the Publications panel starts it.
  const toggle = page.getByRole('checkbox').last();
  await toggle.waitFor({ timeout: 15_000 });
  // Its state follows the process's order, read back from the server: click, then watch the server.
  await toggle.click();
  // The egress runs on the server: streamcore's RTMP server lists the stream it publishes.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const token = await apiToken(context);
    const channels = (await (
      await fetch(`${coreUrl}/api/v3/rtmp`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { name: string }[];
    if (channels.some((channel) => channel.name.includes('/live/walk'))) {
      await page.waitForTimeout(3000);
      return `egress saved; GET /api/v3/rtmp lists ${channels.map((c) => c.name).join(', ')}`;
    }
    if (Date.now() > deadline)
      throw new Error(`the RTMP server lists no /live/walk: ${JSON.stringify(channels)}`);
    await page.waitForTimeout(2000);
  }
}

async function apiToken({ coreUrl, username, password }: WalkContext): Promise<string> {
  const response = await fetch(`${coreUrl}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function playersite(context: WalkContext): Promise<string> {
  const { page, uiUrl, coreUrl } = context;
  await page.goto(`${uiUrl}/?address=${encodeURIComponent(coreUrl)}#/playersite`);
  await page.getByText('EDIT: Publication Website').waitFor();
  const enable = page.getByLabel('Playersite');
  if (!(await enable.isChecked())) await enable.check();
  await shot(context, '06a-playersite-editor');
  await page.getByRole('button', { name: /^save$/i }).click();
  await page.waitForTimeout(5000);
  const site = await fetch(`${coreUrl}/index.html`);
  const body = await site.text();
  if (site.status !== 200 || !body.includes('<html'))
    throw new Error(`${coreUrl}/index.html answered ${site.status}`);
  await page.goto(`${coreUrl}/index.html`);
  // The site's player does not autoplay by default: press its play button as a visitor would.
  await page.locator('.vjs-big-play-button').first().click();
  await page.waitForFunction(
    "(v => v !== null && v.currentTime > 2)(document.querySelector('video'))",
    undefined,
    {
      timeout: 60_000,
    },
  );
  // The figures the page fills from the public widget route every 2 s.
  await page.waitForTimeout(2500);
  const stats = (await page.locator('body').textContent()) ?? '';
  if (/undefined|NaN/.test(stats)) throw new Error('the page shows undefined or NaN figures');
  const playing = await page.evaluate<number>("document.querySelector('video').currentTime");
  return `saved; ${coreUrl}/index.html answers 200 (${body.length} bytes), its player at ${playing.toFixed(1)} s, figures filled`;
}

async function settings(context: WalkContext): Promise<string> {
  const { page, uiUrl, coreUrl } = context;
  await page.goto(`${uiUrl}/?address=${encodeURIComponent(coreUrl)}#/settings`);
  await page.getByRole('tab', { name: 'Network' }).click();
  const domains = page.getByLabel('Public domain/s');
  await domains.fill('localhost');
  await shot(context, '07a-settings-network');
  await page.getByRole('button', { name: /^save$/i }).click();
  await page
    .getByText(/settings saved/i)
    .first()
    .waitFor({ timeout: 20_000 });
  await shot(context, '07b-settings-saved');
  await page
    .getByRole('button', { name: /^restart$/i })
    .last()
    .click();
  await page.waitForURL((url) => !url.hash.includes('settings'), { timeout: 60_000 }).catch(() => undefined);
  await page.waitForTimeout(5000);
  const token = await apiToken(context);
  const config = (await (
    await fetch(`${coreUrl}/api/v3/config`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { config: { host: { name: string[] } }; loaded_at: string; updated_at: string };
  if (config.config.host.name[0] !== 'localhost')
    throw new Error(`host.name is ${JSON.stringify(config.config.host.name)}`);
  return `host.name saved and in effect after the restart (loaded_at ${config.loaded_at} >= updated_at ${config.updated_at})`;
}

async function logs(context: WalkContext): Promise<string> {
  const { page, uiUrl, coreUrl } = context;
  await page.goto(`${uiUrl}/?address=${encodeURIComponent(coreUrl)}#/settings`);
  const expert = page.getByLabel('Expert mode');
  if (!(await expert.isChecked())) await expert.check();
  await page.getByRole('tab', { name: 'Logging' }).click();
  await page.waitForTimeout(3000);
  const text = await page.locator('textarea').first().inputValue();
  const lines = text.split('\n').filter((line) => line.length > 0);
  if (lines.length === 0) throw new Error('the log view is empty');
  if (context.password.length > 0 && text.includes(context.password))
    throw new Error('the log shows the password');
  return `${lines.length} lines, the last: ${lines.at(-1)?.slice(0, 120)}`;
}

export const walkSteps: WalkStep[] = [
  { name: 'login screen', file: '01-login-screen', run: loginScreen },
  { name: 'log in', file: '02-after-login', run: login },
  { name: 'wizard', file: '03-wizard-saved', run: wizard },
  { name: 'channel and player', file: '04-main-playing', run: channelPlays },
  { name: 'publication', file: '05-publication', run: publication },
  { name: 'playersite', file: '06-playersite', run: playersite },
  { name: 'settings', file: '07-settings-restarted', run: settings },
  { name: 'logs', file: '08-logs', run: logs },
];
