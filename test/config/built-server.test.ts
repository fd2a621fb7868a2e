import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startBuiltMain } from '../helpers/main-process.js';

const CHECKOUT = join(import.meta.dirname, '..', '..');
const ENTRY = join(CHECKOUT, 'dist', 'main.js');
const PACKAGE = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { version: string };
const SRT_ADDON = join(CHECKOUT, 'native', 'srt', 'build', 'Release', 'srt_ingest.node');

/**
 * The built server is an esbuild bundle (scripts/build-server.ts) in which every module that reads
 * its own location is given its source file's. These are the answers that depend on it: the
 * package's version (package.json, two levels above src/http/), Swagger UI's static files (the
 * package's own folder), the dashboard (dist/web/dashboard) and the SRT addon (native/srt/build).
 */
describe('the built server (dist/main.js)', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('finds the files it reads beside its modules', async () => {
    assert.ok(existsSync(ENTRY), 'dist/main.js is built by npm ci (prepare) or npm run build');
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-built-'));
    dirs.push(dir);
    const srt = existsSync(SRT_ADDON);
    const server = startBuiltMain(
      ENTRY,
      {
        CORE_ADDRESS: '127.0.0.1:0',
        CORE_CONFIGFILE: join(dir, 'config.json'),
        CORE_DB_DIR: join(dir, 'db'),
        CORE_STORAGE_DISK_DIR: join(dir, 'data'),
        CORE_API_AUTH_ENABLE: 'false',
        // srt.enable is refused at start where the addon cannot be loaded.
        ...(srt ? { CORE_SRT_ENABLE: 'true', CORE_SRT_ADDRESS: '127.0.0.1:0' } : {}),
      },
      CHECKOUT,
    );
    try {
      const url = await server.listening;
      const document = (await (await fetch(`${url}/api/v3/openapi.json`)).json()) as {
        info: { version: string };
      };
      assert.equal(document.info.version, PACKAGE.version);
      const logo = await fetch(`${url}/api/swagger/static/logo.svg`);
      assert.equal(logo.status, 200);
      assert.match(await logo.text(), /<svg/);
      const dashboard = await fetch(`${url}/dashboard/`);
      assert.equal(dashboard.status, 200);
      assert.match(await dashboard.text(), /<html/i);
      if (srt) {
        const answer = await fetch(`${url}/api/v3/srt`);
        assert.equal(answer.status, 200);
      }
    } finally {
      server.child.kill('SIGTERM');
      const exit = await server.exited;
      assert.equal(exit.code, 0, exit.stderr);
    }
  });
});
