import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { METADATA_LIMITS } from '../../src/metadata/index.js';
import { depthOf } from '../../src/metadata/limits.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

async function systemInDb(dir: string): Promise<unknown> {
  const db = JSON.parse(await readFile(join(dir, 'db', 'db.json'), 'utf8')) as {
    metadata: { system: unknown };
  };
  return db.metadata.system;
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
}

describe('server-wide metadata API', () => {
  let dir: string;
  let server: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-metadata-'));
    // A body limit above the metadata bound, so the bound itself answers.
    server = await startServer({ dir, config: { api: { max_body_kbytes: 2048 } } });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores what the UI stores under "restreamer-ui", answers it back, and persists it in db.json', async () => {
    const ui = { version: 1, playersite: { enable: false, title: 'Streams' }, bundle: { version: '2.12.0' } };
    assert.deepEqual(await ok(server, 'GET', '/metadata'), {});
    const missing = await call<Envelope>(server, 'GET', '/metadata/restreamer-ui');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'Metadata not found');
    assert.deepEqual(await ok(server, 'PUT', '/metadata/restreamer-ui', ui), ui);
    assert.deepEqual(await ok(server, 'GET', '/metadata/restreamer-ui'), ui);
    assert.deepEqual(await ok(server, 'PUT', '/metadata/plain', 'text'), 'text');
    assert.deepEqual(await ok(server, 'GET', '/metadata'), { 'restreamer-ui': ui, plain: 'text' });
    assert.deepEqual(await systemInDb(dir), { 'restreamer-ui': ui, plain: 'text' });
    // null deletes.
    assert.equal(await ok(server, 'PUT', '/metadata/plain', null), null);
    assert.deepEqual(await systemInDb(dir), { 'restreamer-ui': ui });
  });

  it('survives a restart', async () => {
    await server.close();
    server = await startServer({ dir, config: { api: { max_body_kbytes: 2048 } } });
    assert.deepEqual(Object.keys(await ok<Record<string, unknown>>(server, 'GET', '/metadata')), [
      'restreamer-ui',
    ]);
  });

  it('refuses a value past the size, depth and key bounds with a 400 naming the bound; nothing is stored', async () => {
    const before = await systemInDb(dir);
    const huge = 'x'.repeat(METADATA_LIMITS.maxTotalBytes);
    const cases: [string, unknown, RegExp][] = [
      ['/metadata/huge', huge, /at most 1048576 allowed/],
      ['/metadata/deep', nested(METADATA_LIMITS.maxDepth + 1), /deeper than 32 levels/],
      [`/metadata/${'k'.repeat(METADATA_LIMITS.maxKeyChars + 1)}`, 1, /at most 256 allowed/],
    ];
    for (const [path, body, detail] of cases) {
      const answer = await call<Envelope>(server, 'PUT', path, body);
      assert.equal(answer.status, 400, answer.text.slice(0, 200));
      assert.equal(answer.body.message, 'Invalid metadata');
      assert.match(answer.body.details.join('\n'), detail);
    }
    assert.deepEqual(await systemInDb(dir), before);
    assert.equal((await call(server, 'GET', '/metadata/huge')).status, 404);
    // Just inside the depth bound is fine.
    await ok(server, 'PUT', '/metadata/deep', nested(METADATA_LIMITS.maxDepth));
    await ok(server, 'PUT', '/metadata/deep', null);
  });

  it('answers bad bodies in the envelope', async () => {
    const response = await fetch(`${server.url}/api/v3/metadata/x`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"unterminated": ',
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as Envelope).code, 400);
    const empty = await fetch(`${server.url}/api/v3/metadata/x`, { method: 'PUT' });
    assert.equal(empty.status, 400);
  });

  it('a write that cannot reach the disk changes nothing in memory', async () => {
    const before = await ok(server, 'GET', '/metadata');
    // db.json replaced by a directory: the atomic rename onto it fails.
    const file = join(dir, 'db', 'db.json');
    await rm(file);
    await mkdir(file);
    try {
      const answer = await call<Envelope>(server, 'PUT', '/metadata/lost', { a: 1 });
      assert.equal(answer.status, 500);
      assert.deepEqual(await ok(server, 'GET', '/metadata'), before);
    } finally {
      await rm(file, { recursive: true });
    }
    await ok(server, 'PUT', '/metadata/after', 1);
    assert.deepEqual(await systemInDb(dir), { ...(before as object), after: 1 });
  });

  it('depthOf stops early on a very deep value', () => {
    assert.equal(depthOf(1), 0);
    assert.equal(depthOf({ a: [1] }), 2);
    assert.equal(depthOf(nested(100_000)), METADATA_LIMITS.maxDepth + 1);
  });
});
