import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';

describe('config loading', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-config-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function problemsOf(env: Record<string, string>): Promise<string[]> {
    try {
      await loadConfig(env, dir);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.problems;
    }
    assert.fail('expected a ConfigError');
  }

  it('creates the file with defaults and generated values, mode 0600, and keeps them', async () => {
    const file = join(dir, 'new', 'config.json');
    const first = await loadConfig({ CORE_CONFIGFILE: file }, dir);
    assert.match(first.config.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(first.config.name, /^[a-z]+-[a-z]+-\d{4}$/);
    assert.ok(Buffer.from(first.config.api.auth.jwt.secret, 'base64url').length >= 32);
    assert.notEqual(first.config.storage.memory.auth.password, '');
    assert.equal(first.config.address, ':8080');
    assert.equal(first.config.db.dir, join(dir, 'config'));
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const saved = JSON.parse(await readFile(file, 'utf8')) as { id: string; metrics: { range_sec: number } };
    assert.equal(saved.id, first.config.id);
    assert.equal(saved.metrics.range_sec, 300);

    const second = await loadConfig({ CORE_CONFIGFILE: file }, dir);
    assert.equal(second.config.id, first.config.id);
    assert.equal(second.config.api.auth.jwt.secret, first.config.api.auth.jwt.secret);
  });

  it('lets env vars override the file without writing them back', async () => {
    const file = join(dir, 'env.json');
    await writeFile(file, JSON.stringify({ metrics: { enable: false, range_sec: 60, interval_sec: 2 } }));
    const { config } = await loadConfig(
      {
        CORE_CONFIGFILE: file,
        CORE_METRICS_ENABLE: 'YES',
        CORE_METRICS_RANGE_SECONDS: '120',
        CORE_METRICS_INTERVAL_SECONDS: '4',
        CORE_SESSIONS_MAXSESSIONS: '7',
        CORE_STORAGE_MEMORY_MAXSIZEMBYTES: '32',
        CORE_SESSIONS_IP_IGNORELIST: '10.0.0.0/8, 192.168.1.1',
      },
      dir,
    );
    assert.equal(config.metrics.enable, true);
    assert.equal(config.metrics.range_sec, 120);
    assert.equal(config.metrics.interval_sec, 4);
    assert.equal(config.sessions.max_sessions, 7);
    assert.equal(config.storage.memory.max_size_mbytes, 32);
    assert.deepEqual(config.sessions.ip_ignorelist, ['10.0.0.0/8', '192.168.1.1']);
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      metrics: { enable: boolean; range_sec: number };
    };
    assert.equal(saved.metrics.enable, false);
    assert.equal(saved.metrics.range_sec, 60);
  });

  it('names the key and the env var of every invalid value', async () => {
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ address: 'nowhere', metrics: { range_sec: 'long' } }));
    const problems = await problemsOf({
      CORE_CONFIGFILE: file,
      CORE_METRICS_INTERVAL_SECONDS: '1.5',
      CORE_API_AUTH_ENABLE: 'maybe',
    });
    assert.ok(problems.some((line) => line.startsWith('metrics.range_sec: ')));
    assert.ok(
      problems.some((line) => line.startsWith('metrics.interval_sec (env CORE_METRICS_INTERVAL_SECONDS): ')),
    );
    assert.ok(problems.some((line) => line.startsWith('api.auth.enable (env CORE_API_AUTH_ENABLE): ')));
    assert.ok(problems.some((line) => line.startsWith('address: ')));
  });

  it('checks cross-field rules: auth credentials and the metrics retention', async () => {
    const file = join(dir, 'cross.json');
    await writeFile(file, '{}');
    const problems = await problemsOf({
      CORE_CONFIGFILE: file,
      CORE_API_AUTH_ENABLE: 'true',
      CORE_API_AUTH_PASSWORD: 'hunter2-secret',
      CORE_METRICS_ENABLE: '1',
      CORE_METRICS_RANGE_SECONDS: '1',
      CORE_METRICS_INTERVAL_SECONDS: '2',
    });
    assert.ok(problems.some((line) => line.startsWith('api.auth.username: ')));
    // Values that came from env vars name them, also for range and cross-field rules.
    assert.ok(
      problems.includes(
        'metrics.range_sec (env CORE_METRICS_RANGE_SECONDS): must be at least metrics.interval_sec',
      ),
      problems.join('\n'),
    );
    assert.ok(
      problems.every((line) => !line.includes('hunter2-secret')),
      'a secret is never printed',
    );
  });

  it('rejects a retention of more than 100000 samples per series', async () => {
    const file = join(dir, 'retention.json');
    await writeFile(file, JSON.stringify({ metrics: { enable: true, range_sec: 200_001, interval_sec: 2 } }));
    const problems = await problemsOf({ CORE_CONFIGFILE: file });
    assert.deepEqual(problems, [
      'metrics.range_sec: range_sec / interval_sec must be at most 100000 samples per series',
    ]);
  });

  it('reports a config file that is not JSON', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{"id": ');
    const problems = await problemsOf({ CORE_CONFIGFILE: file });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /invalid JSON/);
  });
});
