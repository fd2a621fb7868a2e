/**
 * The dashboard's budgets (issue 14): the whole page gzipped, and the time to draw one year of
 * hourly points for 10 series (87 600 points) in Debian's Chromium, against the same points drawn
 * as one plain canvas path per series in the same page and run (the floor any chart code pays).
 *
 * Method: the page and a bench page are bundled with the real build (esbuild); the bench page
 * draws each way 7 times, alternating; the first round is a warm-up; the table shows medians of
 * the other six. The chart's time runs from aligning the answer's series and creating the chart
 * to the end of its first draw (uPlot's draw hook), the baseline's over its synchronous strokes;
 * neither waits for the browser's next frame, whose timing says more about the machine's load
 * than about the page.
 *
 *   node --import tsx bench/dashboard.ts
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildDashboard } from '../scripts/build-dashboard.js';
import { launchBrowser } from '../test/dashboard/browser.js';

const dir = await mkdtemp(join(tmpdir(), 'streamcore-dashboard-bench-'));
await buildDashboard(dir);
let pageBytes = 0;
for (const name of ['index.html', 'app.js', 'app.css'])
  pageBytes += gzipSync(await readFile(join(dir, name)), { level: 9 }).length;

await build({
  entryPoints: [fileURLToPath(new URL('../web/dashboard/bench/render.ts', import.meta.url))],
  outfile: join(dir, 'bench.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  logLevel: 'warning',
});
const html =
  '<!doctype html><html><head><link rel="stylesheet" href="bench.css"></head><body><script type="module" src="bench.js"></script></body></html>';
const server = createServer((request, response) => {
  const name = (request.url ?? '/').slice(1);
  if (name === '' || name === 'index.html') {
    response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    return;
  }
  readFile(join(dir, name)).then(
    (body) =>
      response
        .writeHead(200, { 'content-type': name.endsWith('.js') ? 'text/javascript' : 'text/css' })
        .end(body),
    () => response.writeHead(404).end(),
  );
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  await page.waitForFunction('window.benchResult !== undefined', undefined, { timeout: 120_000 });
  const result = await page.evaluate<{ chart: number[]; plain: number[]; points: number }>(
    'window.benchResult',
  );
  const median = (values: number[]): number => {
    const sorted = values.slice(1).sort((a, b) => a - b); // the first round is the warm-up
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  console.log(`| measure | dashboard | baseline (plain canvas path) | budget |`);
  console.log(`| --- | ---: | ---: | --- |`);
  console.log(
    `| page size, gzipped (index.html + app.js + app.css) | ${(pageBytes / 1024).toFixed(1)} KiB | | < 150 KB |`,
  );
  console.log(
    `| draw 1 y of hourly points × 10 series (${result.points} points), median | ${median(result.chart).toFixed(1)} ms | ${median(result.plain).toFixed(1)} ms | < 200 ms |`,
  );
} finally {
  await browser.close();
  server.close();
}
