import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { strongEtag } from '../http/index.js';
import { contentTypeFor } from '../storage/index.js';

/**
 * Where `npm run build` puts the bundled dashboard (scripts/build-dashboard.ts). The same relative
 * path holds from src/dashboard (tests, tsx) and dist/dashboard (the built server).
 */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../dist/web/dashboard/', import.meta.url));

/** One file of the page, held in memory with its gzip encoding (the page is ~40 KB in all). */
export interface DashboardAsset {
  body: Buffer;
  gzip: Buffer;
  contentType: string;
  /** Strong validator: the body's hash. */
  etag: string;
}

/** The page's files by name (`index.html`, `app.js`, …), or undefined when the page was not built. */
export type DashboardAssets = ReadonlyMap<string, DashboardAsset>;

/**
 * Reads the built page once at start. The files never change while the server runs, so each is
 * compressed once here instead of per request.
 */
export async function loadDashboardAssets(dir: string): Promise<DashboardAssets | undefined> {
  const names = await readdir(dir).catch(() => undefined);
  if (names === undefined || !names.includes('index.html')) return undefined;
  const assets = new Map<string, DashboardAsset>();
  for (const name of names) {
    const body = await readFile(join(dir, name)).catch(() => undefined);
    if (body === undefined) continue; // a directory or an unreadable file is not part of the page
    assets.set(name, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      contentType: contentTypeFor(name),
      etag: strongEtag(body),
    });
  }
  return assets;
}
