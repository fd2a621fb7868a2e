import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { startServer } from '../helpers/server.js';
import { call, lavfiProcess, ok } from './support.js';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

describe('api.limits: what the API may be made to hold', () => {
  it('refuses a process past api.limits.max_processes with 400 naming the key (env form)', async () => {
    const server = await startServer({ env: { CORE_API_LIMITS_MAX_PROCESSES: '3' } });
    try {
      for (const id of ['one', 'two', 'three']) await ok(server, 'POST', '/process', lavfiProcess(id));
      const refused = await call<Envelope>(server, 'POST', '/process', lavfiProcess('four'));
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.details.join(' '), /api\.limits\.max_processes: at most 3 processes/);
      const listed = await ok<{ id: string }[]>(server, 'GET', '/process');
      assert.equal(listed.length, 3, 'nothing was created');
      // Concurrent creations are counted while they are under way: never more than the limit.
      await ok(server, 'DELETE', '/process/three');
      const racing = await Promise.all(
        ['a', 'b', 'c', 'd'].map((id) => call(server, 'POST', '/process', lavfiProcess(id))),
      );
      assert.deepEqual(racing.map((answer) => answer.status).sort(), [200, 400, 400, 400]);
      assert.equal((await ok<{ id: string }[]>(server, 'GET', '/process')).length, 3);
    } finally {
      await server.close();
    }
  });

  it('refuses metadata past api.limits.max_metadata_bytes with 507, the processes and the server together', async () => {
    const server = await startServer({ config: { api: { limits: { max_metadata_bytes: 100_000 } } } });
    try {
      await ok(server, 'POST', '/process', lavfiProcess('one'));
      await ok(server, 'POST', '/process', lavfiProcess('two'));
      const value = 'x'.repeat(40_000);
      await ok(server, 'PUT', '/process/one/metadata/a', value);
      await ok(server, 'PUT', '/metadata/a', value);
      const refused = await call<Envelope>(server, 'PUT', '/process/two/metadata/a', value);
      assert.equal(refused.status, 507, refused.text);
      assert.match(
        refused.body.details.join(' '),
        /api\.limits\.max_metadata_bytes: .* at most 100000 allowed/,
      );
      const system = await call<Envelope>(server, 'PUT', '/metadata/b', value);
      assert.equal(system.status, 507, system.text);
      assert.match(system.body.details.join(' '), /api\.limits\.max_metadata_bytes/);
      assert.deepEqual(await ok(server, 'GET', '/process/two/metadata'), {}, 'nothing was stored');
      // Shrinking is always allowed, and what it frees can be used again.
      await ok(server, 'PUT', '/process/one/metadata/a', 'small');
      await ok(server, 'PUT', '/process/two/metadata/a', value);
      // Deleting a process frees its metadata.
      await ok(server, 'DELETE', '/process/two');
      await ok(server, 'PUT', '/metadata/b', value);
    } finally {
      await server.close();
    }
  });

  it('counts the metadata of a db.json it loads', async () => {
    const first = await startServer({ config: { api: { limits: { max_metadata_bytes: 60_000 } } } });
    const dir = first.dir;
    try {
      await ok(first, 'POST', '/process', lavfiProcess('one'));
      await ok(first, 'PUT', '/process/one/metadata/a', 'x'.repeat(40_000));
    } finally {
      await first.app.close();
    }
    const second = await startServer({ dir, config: { api: { limits: { max_metadata_bytes: 60_000 } } } });
    try {
      const refused = await call<Envelope>(second, 'PUT', '/metadata/a', 'x'.repeat(40_000));
      assert.equal(refused.status, 507, refused.text);
    } finally {
      await second.close();
    }
  });

  it('validates both keys: at least 1, naming the env var it came from and the bound', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-limits-config-'));
    try {
      const env = {
        CORE_CONFIGFILE: join(dir, 'config.json'),
        CORE_API_LIMITS_MAX_PROCESSES: '0',
        CORE_API_LIMITS_MAX_METADATA_BYTES: '0',
      };
      const error = await loadConfig(env, dir).then(
        () => assert.fail('expected a ConfigError'),
        (thrown: unknown) => thrown,
      );
      assert.ok(error instanceof ConfigError);
      assert.ok(
        error.problems.some((problem) =>
          problem.startsWith(
            'api.limits.max_processes (env CORE_API_LIMITS_MAX_PROCESSES): must be between 1 and ',
          ),
        ),
        error.problems.join('\n'),
      );
      assert.ok(
        error.problems.some((problem) =>
          problem.startsWith(
            'api.limits.max_metadata_bytes (env CORE_API_LIMITS_MAX_METADATA_BYTES): must be between 1 and ',
          ),
        ),
        error.problems.join('\n'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
