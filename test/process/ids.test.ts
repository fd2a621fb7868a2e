import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok } from './support.js';

interface Envelope {
  code: number;
  details: string[];
}

/** Issue 10 item 8: a process that can be created can always be read, updated and deleted. */
describe('process ids', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('refuses ids no URL can reach, on create and on rename, naming the rule', async () => {
    const refused: [string, string][] = [
      ['.', 'id: "." is not allowed'],
      ['..', 'id: ".." is not allowed'],
      ['a\ud800b', 'lone surrogate'],
      ['\udfffx', 'lone surrogate'],
      ['a\u0000b', 'control characters'],
      ['line\nbreak', 'control characters'],
      ['del\u007f', 'control characters'],
      ['x'.repeat(1001), 'id: 1001 characters when URL-encoded, at most 1000'],
      ['é'.repeat(167), 'id: 1002 characters when URL-encoded, at most 1000'],
      ['a/b', 'id: must not contain "/"'],
      ['', 'id: must not be empty'],
    ];
    await ok(server, 'POST', '/process', lavfiProcess('plain'));
    for (const [id, detail] of refused) {
      const created = await call<Envelope>(server, 'POST', '/process', lavfiProcess(id));
      assert.equal(created.status, 400, `${JSON.stringify(id)}: ${created.text}`);
      assert.ok(
        created.body.details.some((line) => line.includes(detail)),
        `${detail} in ${created.text}`,
      );
      const renamed = await call<Envelope>(server, 'PUT', '/process/plain', { id });
      assert.equal(renamed.status, 400, `rename to ${JSON.stringify(id)}: ${renamed.text}`);
    }
    const ids = (await ok<{ id: string }[]>(server, 'GET', '/process')).map((process) => process.id);
    assert.deepEqual(ids, ['plain']);
    await ok(server, 'DELETE', '/process/plain');
  });

  it('keeps every accepted id reachable, up to the longest the router takes', async () => {
    const accepted = [
      'é'.repeat(166) + 'abcd', // exactly 1000 characters URL-encoded
      'x'.repeat(1000),
      'emoji 😀 pair',
      'spaces and ?query#hash%25',
      '...',
      '.hidden',
    ];
    for (const id of accepted) {
      await ok(server, 'POST', '/process', lavfiProcess(id));
      const path = `/process/${encodeURIComponent(id)}`;
      const read = await ok<{ id: string }>(server, 'GET', path);
      assert.equal(read.id, id);
      await ok(server, 'PUT', `${path}/metadata/k`, { v: 1 });
      await ok(server, 'PUT', path, { reference: 'updated' });
      assert.equal((await ok<{ reference: string }>(server, 'GET', `${path}/config`)).reference, 'updated');
      await ok(server, 'PUT', `${path}/command`, { command: 'stop' });
      await ok(server, 'DELETE', path);
      assert.equal((await call(server, 'GET', path)).status, 404);
    }
  });
});
