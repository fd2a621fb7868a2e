import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, defaultConfig, getPath, KEYS, loadConfig, setPath } from '../../src/config/index.js';

describe('config loading: every integer key has bounds', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-bounds-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function problemsOf(fileJson: Record<string, unknown>, env: Record<string, string> = {}) {
    const file = join(dir, 'config.json');
    await writeFile(file, JSON.stringify(fileJson));
    try {
      await loadConfig({ ...env, CORE_CONFIGFILE: file }, dir);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.problems;
    }
    return [];
  }

  const intKeys = KEYS.filter((key) => key.kind === 'int');

  it('gives each a range that holds its default', () => {
    assert.ok(intKeys.length > 25);
    for (const key of intKeys) {
      assert.ok(key.range !== undefined, `${key.path} has bounds`);
      const value = getPath(defaultConfig(), key.path) as number;
      assert.ok(value >= key.range.min && value <= key.range.max, `${key.path}: default ${value}`);
    }
  });

  it('refuses a value past either bound, in the file or an env var, naming the key and the bound', async () => {
    for (const key of intKeys) {
      const range = key.range;
      assert.ok(range !== undefined);
      const tooBig: Record<string, unknown> = {};
      setPath(tooBig, key.path, range.max + 1);
      const expected = `${key.path}: must be between ${range.min} and ${range.max} (${range.why}), got ${range.max + 1}`;
      assert.deepEqual(await problemsOf(tooBig), [expected]);
      if (range.min > 0) {
        const tooSmall: Record<string, unknown> = {};
        setPath(tooSmall, key.path, range.min - 1);
        const problems = await problemsOf(tooSmall);
        assert.ok(problems[0]?.startsWith(`${key.path}: must be between ${range.min} and`), problems.join());
      }
    }
    const env = await problemsOf({}, { CORE_API_MAX_BODY_KBYTES: '1000000' });
    assert.deepEqual(env, [
      'api.max_body_kbytes (env CORE_API_MAX_BODY_KBYTES): must be between 1 and 65536 (a body is held in memory whole before it is parsed), got 1000000',
    ]);
  });
});
