// test-alone: a Chromium running the Restreamer UI's 2 MB bundle needs the machine's cores.
import assert from 'node:assert/strict';
import { createHash, createPublicKey } from 'node:crypto';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../dashboard/browser.js';
import { selfSigned } from '../helpers/pebble.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * A built Restreamer UI (docs/restreamer-ui.md says how to build one; CI cannot, so the test is
 * skipped without it). Built with `PUBLIC_URL=./` as its Dockerfile does, so it works under /ui/.
 */
const BUILD = process.env.RESTREAMER_UI_BUILD ?? '';
const PASSWORD = 'ui-same-origin-pass';

describe(
  'the Restreamer UI served by streamcore at /ui/ (router.ui_path), in Chromium',
  { skip: BUILD === '' ? 'RESTREAMER_UI_BUILD is not set' : false },
  () => {
    let server: TestServer;
    let browser: Browser;
    let certificates: string;
    before(async () => {
      await access(join(BUILD, 'index.html'));
      // The same server over HTTPS too (docs/tls.md): one streamcore is the whole Restreamer.
      certificates = await mkdtemp(join(tmpdir(), 'streamcore-ui-tls-'));
      const { cert, key } = selfSigned(certificates, 'ui', 'DNS:localhost,IP:127.0.0.1');
      server = await startServer({
        config: {
          api: { auth: { enable: true, username: 'admin', password: PASSWORD } },
          router: { ui_path: BUILD, routes: { '/': '/ui/' } },
          tls: { enable: true, address: '127.0.0.1:0', cert_file: cert, key_file: key },
        },
      });
      // Chromium trusts exactly this key (not every certificate).
      const spki = createHash('sha256')
        .update(createPublicKey(await readFile(key)).export({ type: 'spki', format: 'der' }))
        .digest('base64');
      browser = await launchBrowser([`--ignore-certificate-errors-spki-list=${spki}`]);
    });
    after(async () => {
      await browser?.close();
      await server?.close();
      await rm(certificates, { recursive: true, force: true });
    });

    for (const scheme of ['http', 'https'] as const) {
      it(`logs in on the same origin over ${scheme}, with no request elsewhere and nothing the policy blocks`, async () => {
        const origin = scheme === 'http' ? server.url : (server.app.tls.url as string);
        const page = await browser.newPage();
        const problems: string[] = [];
        const origins = new Set<string>();
        // Chromium reports what the policy blocks on the console ("Refused to … Content Security Policy").
        page.on('console', (message) => {
          if (/refused|security policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
        });
        page.on('pageerror', (error) => problems.push(`page: ${error.message}`));
        page.on('request', (request) => origins.add(new URL(request.url()).origin));
        page.on('response', (response) => {
          // A 404 is the UI asking for its channel and settings before it made them, as against the
          // reference (docs/restreamer-ui.md); any other failure is a problem.
          if (response.status() >= 400 && response.status() !== 404) {
            problems.push(`${response.status()} ${response.request().method()} ${response.url()}`);
          }
        });
        // The server's root redirects to the UI (router.routes), which takes its API address from there.
        await page.goto(origin);
        assert.equal(new URL(page.url()).pathname, '/ui/');
        await page.getByLabel('Username').fill('admin');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: /login/i }).click();
        await page
          .getByText(/welcome to restreamer|livestream/i)
          .first()
          .waitFor({ timeout: 60_000 });
        // Reloaded, it is still logged in: its tokens are in the origin's storage, not sandboxed away.
        await page.reload();
        await page
          .getByText(/welcome to restreamer|livestream/i)
          .first()
          .waitFor({ timeout: 60_000 });
        assert.deepEqual(problems, []);
        assert.ok(origins.has(origin), [...origins].join(' '));
        // Nothing goes to the server's other listener (over https that would be mixed content); the
        // UI's own calls to datarhei's service are its business.
        const local = new URL(origin).hostname;
        assert.deepEqual(
          [...origins].filter((other) => new URL(other).hostname === local && other !== origin),
          [],
        );
      });
    }
  },
);
