import assert from 'node:assert/strict';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, waitForState } from '../process/support.js';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

interface DbFile {
  process: Record<string, { order: string; reference: string }>;
  metadata: { system: Record<string, unknown>; process: Record<string, unknown> };
}

/** 6000 arrays inside each other, 12 KB of JSON: its stringify once overflowed the db writer. */
const DEEP = `${'['.repeat(6000)}${']'.repeat(6000)}`;

/**
 * Issue 10 item 3 over HTTP: a change that cannot be saved is refused and leaves memory as the
 * file is; one that breaks a metadata bound is a 400 naming it; the next change works.
 */
describe('every change is all or nothing with db.json', () => {
  let server: TestServer;
  let dbDir: string;

  before(async () => {
    server = await startServer();
    dbDir = server.config.db.dir;
  });
  after(() => server.close());

  /** db.json holds exactly what the API shows: processes, their orders and references, metadata. */
  async function assertDbMatchesApi(): Promise<void> {
    const db = JSON.parse(await readFile(join(dbDir, 'db.json'), 'utf8')) as DbFile;
    const processes = await ok<
      { id: string; reference: string; metadata?: unknown; state: { order: string } }[]
    >(server, 'GET', '/process?filter=config,state,metadata');
    assert.deepEqual(Object.keys(db.process).sort(), processes.map((p) => p.id).sort());
    for (const process of processes) {
      assert.equal(db.process[process.id]?.order, process.state.order, `order of ${process.id}`);
      assert.equal(db.process[process.id]?.reference, process.reference, `reference of ${process.id}`);
      const metadata = await ok<Record<string, unknown>>(server, 'GET', `/process/${process.id}/metadata`);
      assert.deepEqual(db.metadata.process[process.id] ?? {}, metadata, `metadata of ${process.id}`);
    }
    assert.deepEqual(db.metadata.system, await ok(server, 'GET', '/metadata'));
  }

  async function expectStatus(
    status: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Envelope> {
    const answer = await call<Envelope>(server, method, path, body);
    assert.equal(answer.status, status, `${method} ${path}: ${answer.text}`);
    return answer.body;
  }

  it('refuses metadata past the depth and size bounds with a 400 naming the limit', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('meta'));
    for (const path of ['/process/meta/metadata/deep', '/metadata/deep']) {
      // Sent as text: the test's own JSON.stringify cannot take that depth either.
      const deep = await fetch(`${server.url}/api/v3${path}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: DEEP,
      });
      assert.equal(deep.status, 400);
      assert.match(((await deep.json()) as Envelope).details.join(), /value: nested deeper than 32 levels/);
      const long = await expectStatus(400, 'PUT', path.replace('deep', 'k'.repeat(300)), 1);
      assert.match(long.details.join(), /key: 300 characters, at most 256 allowed/);
    }
    // 33 levels is one too many, 32 fit.
    const nest = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
    await expectStatus(400, 'PUT', '/process/meta/metadata/n', nest(33));
    await ok(server, 'PUT', '/process/meta/metadata/n', nest(32));
    // Saving still works after the refusals, and the file holds what the API shows.
    await ok(server, 'PUT', '/metadata/after', { fine: true });
    await assertDbMatchesApi();
    await ok(server, 'DELETE', '/process/meta');
    await ok(server, 'PUT', '/metadata/after', null);
  });

  it('answers 500 and changes nothing while db.json cannot be written, and works again after', async () => {
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('kept', { reference: 'before' }),
      autostart: true,
    });
    await waitForState(server, 'kept', 'running');
    await ok(server, 'POST', '/process', lavfiProcess('idle'));
    await ok(server, 'PUT', '/process/kept/metadata/a', 1);
    await ok(server, 'PUT', '/metadata/s', 'before');
    await assertDbMatchesApi();
    const saved = await readFile(join(dbDir, 'db.json'), 'utf8');

    // A file where the db directory was: no write can succeed, for root too (mode bits would not
    // stop root). The directory itself is kept aside and put back afterwards.
    await rename(dbDir, `${dbDir}.away`);
    await writeFile(dbDir, 'not a directory');
    try {
      const refused: [string, string, unknown?][] = [
        ['POST', '/process', lavfiProcess('new', { autostart: true })],
        ['PUT', '/process/kept', { reference: 'after' }],
        ['PUT', '/process/kept', { id: 'renamed' }],
        ['DELETE', '/process/kept'],
        ['PUT', '/process/kept/command', { command: 'stop' }],
        ['PUT', '/process/idle/command', { command: 'start' }],
        ['PUT', '/process/kept/metadata/a', 2],
        ['PUT', '/process/kept/metadata/a', null],
        ['PUT', '/metadata/s', 'after'],
      ];
      for (const [method, path, body] of refused) {
        const envelope = await expectStatus(500, method, path, body);
        assert.equal(envelope.message, 'Change not saved', `${method} ${path}`);
        assert.match(
          envelope.details.join(),
          /the change could not be saved to .*db\.json \(ENOTDIR: .* exists and is not a directory\); it was not applied/,
        );
      }
      // Memory is what the file holds.
      const ids = (await ok<{ id: string }[]>(server, 'GET', '/process')).map((p) => p.id);
      assert.deepEqual(ids, ['idle', 'kept']);
      const kept = await ok<{ reference: string }>(server, 'GET', '/process/kept/config');
      assert.equal(kept.reference, 'before');
      const state = await waitForState(server, 'kept', 'running');
      assert.equal(state.order, 'start');
      const idle = await ok<{ state: { order: string; exec: string } }>(
        server,
        'GET',
        '/process/idle?filter=state',
      );
      assert.deepEqual([idle.state.order, idle.state.exec], ['stop', 'finished']);
      assert.equal(await ok(server, 'GET', '/process/kept/metadata/a'), 1);
      assert.equal(await ok(server, 'GET', '/metadata/s'), 'before');
    } finally {
      await rm(dbDir, { force: true });
      await rename(`${dbDir}.away`, dbDir);
    }
    assert.equal(await readFile(join(dbDir, 'db.json'), 'utf8'), saved, 'the file was never touched');

    // The cause is gone: every kind of change works again, and the file follows.
    await ok(server, 'PUT', '/process/kept', { reference: 'after' });
    await ok(server, 'PUT', '/process/kept/metadata/a', 2);
    await ok(server, 'PUT', '/process/idle/command', { command: 'start' });
    await ok(server, 'PUT', '/metadata/s', 'after');
    await ok(server, 'POST', '/process', lavfiProcess('new'));
    await ok(server, 'DELETE', '/process/new');
    await assertDbMatchesApi();
    for (const id of ['idle', 'kept']) await ok(server, 'DELETE', `/process/${id}`);
    await ok(server, 'PUT', '/metadata/s', null);
    await assertDbMatchesApi();
  });
});
