import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';

// Found by a benchmark whose driver died: the server's stdout pipe lost its reader, the EPIPE
// became an uncaught exception whose own log line failed the same way, and the server spun at
// 16 % CPU for good, ignoring SIGTERM.
describe('a server whose stdout reader went away', () => {
  let dir: string;
  let server: ReturnType<typeof startMain> | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-closed-stdout-'));
  });
  after(async () => {
    // A regression spins instead of exiting: do not leave it running.
    if (server !== undefined && server.child.exitCode === null) server.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'keeps answering, keeps its log lines for the API, and stops on SIGTERM with exit code 0',
    { timeout: 60_000 },
    async () => {
      server = startMain(
        {
          CORE_ADDRESS: '127.0.0.1:0',
          CORE_API_AUTH_ENABLE: 'true',
          CORE_API_AUTH_USERNAME: 'admin',
          CORE_API_AUTH_PASSWORD: 'right-password',
        },
        dir,
      );
      const { child, exited, listening } = server;
      const url = await listening;
      child.stdout.destroy();
      // Each refused login writes a warning to the closed pipe.
      for (let i = 0; i < 3; i++) {
        const refused = await fetch(`${url}/api/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: `wrong-${i}` }),
        });
        assert.equal(refused.status, 401);
      }
      assert.equal(await (await fetch(`${url}/ping`)).text(), 'pong');

      const login = await fetch(`${url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'right-password' }),
      });
      assert.equal(login.status, 200);
      const { access_token: token } = (await login.json()) as { access_token: string };
      const log = await fetch(`${url}/api/v3/log`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(log.status, 200);
      const lines = JSON.stringify(await log.json());
      assert.match(lines, /wrong|refused|invalid|failed/i, 'the refused logins are in the ring buffer');

      child.kill('SIGTERM');
      const exit = await exited;
      assert.equal(exit.code, 0, exit.stderr);
    },
  );
});
