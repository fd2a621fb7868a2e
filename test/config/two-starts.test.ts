import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readStartScript } from '../../scripts/start-script.js';
import { startBuiltMain } from '../helpers/main-process.js';

const CHECKOUT = join(import.meta.dirname, '..', '..');
const SCRIPTS = (
  JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/**
 * `npm start` runs only the server (the build runs once, at install, through `prepare`): two
 * starts from the same checkout at once no longer race on `dist/` (issue 11). Runs what `npm
 * start` runs, from the checkout, twice at the same moment; each server gets its own config, db
 * and disk directory and a free loopback port, and both must answer /ping.
 */
describe('npm start', () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('builds nothing: no prestart script, the start script runs node on the built entry', () => {
    assert.equal(SCRIPTS.prestart, undefined);
    assert.match(SCRIPTS.prepare ?? '', /npm run build/);
    // The shape every reader of the script relies on (scripts/start-script.ts throws otherwise).
    assert.doesNotThrow(readStartScript);
  });

  it('two servers started from the same checkout at once both answer /ping', async () => {
    // `node [flags] entry`: the flags (a V8 heap setting) are given to the servers too.
    const { entry, flags } = readStartScript();
    assert.ok(existsSync(join(CHECKOUT, entry)), `${entry} is built by npm ci (prepare) or npm run build`);
    const starts = [0, 1].map(async () => {
      const dir = await mkdtemp(join(tmpdir(), 'streamcore-two-starts-'));
      dirs.push(dir);
      return startBuilt(entry, flags, dir);
    });
    const servers = await Promise.all(starts);
    try {
      for (const server of servers) {
        const url = await server.listening;
        const ping = await fetch(`${url}/ping`);
        assert.equal(await ping.text(), 'pong');
      }
    } finally {
      for (const server of servers) server.child.kill('SIGTERM');
      const exits = await Promise.all(servers.map((server) => server.exited));
      for (const exit of exits) assert.equal(exit.code, 0, exit.stderr);
    }
  });
});

function startBuilt(entry: string, flags: string[], dir: string) {
  return startBuiltMain(
    entry,
    {
      CORE_ADDRESS: '127.0.0.1:0',
      CORE_CONFIGFILE: join(dir, 'config.json'),
      CORE_DB_DIR: join(dir, 'db'),
      CORE_STORAGE_DISK_DIR: join(dir, 'data'),
    },
    CHECKOUT,
    flags,
  );
}
