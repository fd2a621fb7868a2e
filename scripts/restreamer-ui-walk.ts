/**
 * Walks the datarhei Restreamer UI through its screens against a running streamcore, in headless
 * Chromium, and reports what worked, every failed request and every console error. A manual tool
 * (CI cannot build the UI); docs/restreamer-ui.md says how to build the UI and what a walk showed.
 *
 *   node --import tsx scripts/restreamer-ui-walk.ts <built UI dir> [screenshot dir]
 *
 * Env: CORE_URL (default http://127.0.0.1:8080), CORE_USERNAME, CORE_PASSWORD (the server's
 * api.auth credentials), CHROMIUM_PATH (default /usr/bin/chromium).
 *
 * The UI is served from its own loopback origin (another port), as a real deployment beside the
 * core would be, and opened with `?address=<CORE_URL>`. Requests to any other host (the UI's update
 * check at service.datarhei.com) are aborted and listed separately: the machine has no internet.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { serveStatic } from './restreamer-ui-walk/static-server.js';
import { Recorder } from './restreamer-ui-walk/recorder.js';
import { walkSteps, type WalkContext } from './restreamer-ui-walk/steps.js';
import { launchChromium } from './chromium.js';

const uiDir = process.argv[2];
if (uiDir === undefined) {
  process.stderr.write('usage: restreamer-ui-walk.ts <built UI dir> [screenshot dir]\n');
  process.exit(2);
}
const shotDir = resolve(process.argv[3] ?? '/tmp/restreamer-ui-walk');
const coreUrl = (process.env.CORE_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const username = process.env.CORE_USERNAME ?? 'admin';
const password = process.env.CORE_PASSWORD ?? '';

await mkdir(shotDir, { recursive: true });
const ui = await serveStatic(resolve(uiDir));
// The player is muted and started by the script; let it play without a user gesture.
const browser = await launchChromium(['--autoplay-policy=no-user-gesture-required']);
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
// localhost too: after the settings step the UI builds its addresses from host.name 'localhost'.
const recorder = new Recorder(page, [ui.origin, coreUrl, coreUrl.replace('//127.0.0.1:', '//localhost:')]);
const context: WalkContext = {
  page,
  uiUrl: ui.origin,
  coreUrl,
  username,
  password,
  shotDir,
  recorder,
  sourceUrl: process.env.SOURCE_URL ?? `${coreUrl}/memfs/walk-source.m3u8`,
  rtmpHost: process.env.RTMP_HOST ?? 'rtmp://127.0.0.1:1935',
};

let failed = 0;
for (const step of walkSteps) {
  recorder.startStep(step.name);
  const started = Date.now();
  let outcome: string;
  try {
    outcome = `ok: ${await step.run(context)}`;
  } catch (error) {
    failed += 1;
    outcome = `FAILED: ${error instanceof Error ? error.message : String(error)}`;
  }
  await page.screenshot({ path: `${shotDir}/${step.file}.png`, fullPage: true }).catch(() => undefined);
  process.stdout.write(`[${step.name}] ${outcome} (${Date.now() - started} ms, ${step.file}.png)\n`);
}

process.stdout.write(recorder.report());
await browser.close();
await ui.close();
process.exit(failed === 0 && recorder.problemCount() === 0 ? 0 : 1);
