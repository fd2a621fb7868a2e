import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { V16_FIELDS } from '../../src/config-api/index.js';
import { defaultConfig, getPath, KEYS, setPath, type IntRange } from '../../src/config/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call } from '../process/support.js';

/** Every integer of the v16 layout with its bounds: its own, or those of streamcore's key. */
function intFields(): { path: string; range: IntRange; fallback: unknown }[] {
  return V16_FIELDS.filter((field) => field.kind === 'int').map((field) => {
    const range = field.range ?? KEYS.find((key) => key.path === field.path)?.range;
    assert.ok(range !== undefined, `${field.path} has bounds`);
    return { path: field.path, range, fallback: field.stored ?? getPath(defaultConfig(), field.path) };
  });
}

function body(path: string, value: unknown): Record<string, unknown> {
  const result: Record<string, unknown> = { version: 3 };
  setPath(result, path, value);
  return result;
}

describe('config API: every number has bounds', () => {
  let server: TestServer;
  let configFile: string;
  before(async () => {
    server = await startServer();
    configFile = join(server.dir, 'config.json');
  });
  after(() => server.close());

  it("keeps the reference's defaults and streamcore's inside the bounds", () => {
    for (const { path, range, fallback } of intFields()) {
      assert.equal(typeof fallback, 'number', path);
      assert.ok((fallback as number) >= range.min && (fallback as number) <= range.max, path);
    }
  });

  it('refuses log.max_lines: 1e9 (400, the key and the bound) and stores nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    const answer = await call<{ details: string[] }>(server, 'PUT', '/config', body('log.max_lines', 1e9));
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(answer.body.details, [
      'log.max_lines: must be between 0 and 100000 (the reference keeps that many log lines in memory), got 1000000000',
    ]);
    assert.equal(await readFile(configFile, 'utf8'), before);
  });

  it('refuses one past the upper bound of each integer, and takes the bound itself', async () => {
    for (const { path, range } of intFields()) {
      const before = await readFile(configFile, 'utf8');
      const over = await call<{ details: string[] }>(server, 'PUT', '/config', body(path, range.max + 1));
      assert.equal(over.status, 400, `${path}: ${over.text}`);
      const detail = over.body.details.find((line) => line.startsWith(`${path}: `)) ?? '';
      assert.ok(detail.startsWith(`${path}: must be between ${range.min} and ${range.max} (`), over.text);
      assert.equal(await readFile(configFile, 'utf8'), before, `${path}: nothing stored`);
      const atMax = await call(server, 'PUT', '/config', body(path, range.max));
      assert.equal(atMax.status, 200, `${path}: ${atMax.text}`);
    }
  });
});
