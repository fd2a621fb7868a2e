import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getPath } from '../../src/config/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

const S3 = {
  name: 'media',
  mountpoint: '/s3',
  auth: { enable: true, username: 'publisher', password: 's3-mount-password-77' },
  // Nothing listens there: the server starts all the same and answers 502 on the mount.
  endpoint: '127.0.0.1:9',
  access_key_id: 'AKIA-TEST',
  secret_access_key: 's3-secret-key-0123456789',
  bucket: 'media',
  region: 'us-east-1',
  use_ssl: false,
};

/**
 * `storage.s3` through `/api/v3/config` (docs/storage.md#s3-filesystems): answered in the
 * reference's shape with its secrets withheld, carried through a client's round trip (the
 * Restreamer UI sends the whole layout back), changed only in the file.
 */
describe('config API: storage.s3', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { s3: [S3] } } });
  });
  after(() => server.close());

  it('answers the entry without its secrets and keeps them through an echo', async () => {
    const answer = await call<{ config: Record<string, unknown> }>(server, 'GET', '/config');
    assert.ok(!answer.text.includes(S3.secret_access_key) && !answer.text.includes(S3.auth.password));
    assert.deepEqual(getPath(answer.body.config, 'storage.s3'), [
      { ...S3, secret_access_key: '', auth: { ...S3.auth, password: '' } },
    ]);
    assert.equal(await ok(server, 'PUT', '/config', { ...answer.body.config, name: 'echoed' }), 'OK');
    const file = JSON.parse(await readFile(join(server.dir, 'config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(getPath(file, 'storage.s3'), [S3]);
    assert.equal(getPath(file, 'name'), 'echoed');
  });

  it('refuses a change of the S3 entries through the API, naming the key and never a secret', async () => {
    const answer = await call<{ details: string[] }>(server, 'PUT', '/config', {
      version: 3,
      storage: { s3: [{ ...S3, endpoint: '169.254.169.254', secret_access_key: 'new-secret-key' }] },
    });
    assert.equal(answer.status, 400, answer.text);
    assert.match(
      answer.body.details.join('\n'),
      /storage\.s3: can only be changed in the config file on the server/,
    );
    assert.ok(!answer.text.includes('new-secret-key') && !answer.text.includes(S3.secret_access_key));
  });

  it('answers 502 on the mount while its endpoint is unreachable, naming the filesystem', async () => {
    const read = await fetch(`${server.url}/s3/any.ts`);
    assert.equal(read.status, 502);
    const envelope = (await read.json()) as { details: string[] };
    assert.match(envelope.details.join(' '), /s3 filesystem "media": 127\.0\.0\.1:9/);
    assert.ok(!JSON.stringify(envelope).includes(S3.secret_access_key));
  });
});
