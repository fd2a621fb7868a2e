import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { authConfig, rawRequest } from '../auth/support.js';
import { launchBrowser } from '../dashboard/browser.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Swagger UI at /api/swagger/ (src/http/openapi/swagger-ui.ts): served by the server itself from
 * the files the swagger-ui package ships, read on the first request. Checked in Chromium: the page
 * renders the API's operations from the server's own description, with nothing from another host
 * and no Content-Security-Policy violation.
 */
describe('Swagger UI', () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startServer({ config: authConfig() });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser.close();
    await server.close();
  });

  it('renders the API description in a browser, from this server only, within its policy', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const violations: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) {
        foreign.push(request.url());
      }
    });
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.goto(`${server.url}/api/swagger/`);
      await page.locator('.opblock-summary-path', { hasText: '/api/v3/process' }).first().waitFor();
      assert.equal(
        await page
          .locator('.info .title')
          .first()
          .textContent()
          .then((t) => t?.trim().startsWith('streamcore API')),
        true,
      );
      // Without the trailing slash the page's links are absolute: the same page.
      await page.goto(`${server.url}/api/swagger`);
      await page.locator('.opblock-summary-path', { hasText: '/api/login' }).first().waitFor();
    } finally {
      await page.close();
    }
    assert.deepEqual(foreign, []);
    assert.deepEqual(violations, []);
  });

  it('answers a file it does not ship, or a path out of its folder, with the 404 envelope', async () => {
    for (const path of ['nothing.js', '..%2F..%2Fpackage.json', '..%2Findex.js', '%2Fetc%2Fpasswd']) {
      const answer = await rawRequest(`${server.url}/api/swagger/static/${path}`);
      assert.equal(answer.status, 404, path);
      const body = JSON.parse(answer.text) as { code: number; message: string };
      assert.equal(body.code, 404, path);
    }
  });

  it('revalidates a file by its ETag', async () => {
    const first = await rawRequest(`${server.url}/api/swagger/static/swagger-ui.css`);
    assert.equal(first.status, 200);
    assert.match(String(first.headers['content-type']), /^text\/css/);
    const etag = String(first.headers.etag);
    const again = await rawRequest(`${server.url}/api/swagger/static/swagger-ui.css`, {
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
  });

  it('keeps the index path of the package pointing at the page', async () => {
    const answer = await rawRequest(`${server.url}/api/swagger/static/index.html`);
    assert.equal(answer.status, 302);
    assert.equal(answer.headers.location, '/api/swagger/');
  });
});
