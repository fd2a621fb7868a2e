/**
 * Bundles the dashboard (web/dashboard) into static files the server ships: index.html, app.js
 * and app.css, minified, with nothing loaded from another host. Run by `npm run build`; tests call
 * `buildDashboard` into a directory of their own.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SOURCE = fileURLToPath(new URL('../web/dashboard/', import.meta.url));
/** Where the server looks by default (see src/dashboard/assets.ts). */
export const DEFAULT_DASHBOARD_OUT = fileURLToPath(new URL('../dist/web/dashboard/', import.meta.url));

export async function buildDashboard(outDir: string = DEFAULT_DASHBOARD_OUT): Promise<void> {
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: [join(SOURCE, 'src/main.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    legalComments: 'none',
    logLevel: 'warning',
  });
  await copyFile(join(SOURCE, 'index.html'), join(outDir, 'index.html'));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildDashboard(process.argv[2]);
}
