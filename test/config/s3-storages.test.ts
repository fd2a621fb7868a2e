import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSecrets, defaultConfig, loadConfig } from '../../src/config/index.js';
import { validateConfig } from '../../src/config/validate.js';
import { parseS3StoragesEnv, readS3Storage, s3StorageProblems } from '../../src/config/s3-storages.js';
import type { S3Storage } from '../../src/config/schema.js';

const ENTRY: S3Storage = {
  name: 'media',
  mountpoint: '/s3',
  auth: { enable: false, username: '', password: '' },
  endpoint: 's3.example.com',
  access_key_id: 'key',
  secret_access_key: 'secret',
  bucket: 'bucket',
  region: 'eu-central-1',
  use_ssl: true,
};

describe('storage.s3 (docs/storage.md#s3-filesystems)', () => {
  it('parses the env form as the reference does, an IP endpoint and percent-encoded keys included', () => {
    const parsed = parseS3StoragesEnv(
      'http://AK%2Fx:se%40cret@us-east-1.127.0.0.1:9000/media?name=local&mount=/s3&username=u&password=p%26w' +
        '|https://key:secret@eu-central-1.s3.example.com/bucket?name=media&mount=/s3b',
    );
    assert.deepEqual(parsed, {
      storages: [
        {
          name: 'local',
          mountpoint: '/s3',
          auth: { enable: true, username: 'u', password: 'p&w' },
          endpoint: '127.0.0.1:9000',
          access_key_id: 'AK/x',
          secret_access_key: 'se@cret',
          bucket: 'media',
          region: 'us-east-1',
          use_ssl: false,
        },
        { ...ENTRY, mountpoint: '/s3b' },
      ],
    });
    // `new URL` refuses that host: the reason for a parser of our own.
    assert.throws(() => new URL('http://k:s@us-east-1.127.0.0.1:9000/b'));
  });

  it('names the item and the problem of an env value it cannot read, never the secret', () => {
    const bad = parseS3StoragesEnv('https://k:s@r.e/b?name=a|ftp://k:top-secret@r.e/b');
    assert.deepEqual(bad, { problem: 'item 2: scheme "ftp" must be http or https' });
    const encoding = parseS3StoragesEnv('http://k:top%ZZsecret@r.e/b?name=a&mount=/a');
    assert.ok('problem' in encoding && !encoding.problem.includes('secret%ZZ'));
  });

  it('reads the file form with the reference defaults and refuses wrong types', () => {
    assert.deepEqual(readS3Storage({ name: 'x', mountpoint: '/x' }), {
      ...ENTRY,
      name: 'x',
      mountpoint: '/x',
      endpoint: '',
      access_key_id: '',
      secret_access_key: '',
      bucket: '',
      region: '',
      use_ssl: false,
    });
    assert.equal(readS3Storage({ use_ssl: 'yes' }), 'use_ssl must be true or false');
    assert.equal(readS3Storage({ auth: { username: 1 } }), 'auth.username must be a string');
    assert.equal(readS3Storage([]), 'must be a JSON object');
  });

  it('gives one message per problem, naming the entry and the field', () => {
    assert.deepEqual(s3StorageProblems([ENTRY]), []);
    assert.deepEqual(
      s3StorageProblems([
        { ...ENTRY, name: '', mountpoint: '', endpoint: '', bucket: '' },
        { ...ENTRY, name: 'mem', mountpoint: '/memfs/x', endpoint: 'http://host/x', bucket: 'Bad_Bucket' },
        {
          ...ENTRY,
          name: 'a.b',
          mountpoint: '/s3/deeper',
          auth: { enable: true, username: '', password: '' },
        },
        { ...ENTRY, mountpoint: '/' },
        { ...ENTRY, mountpoint: '/s3/deeper/more' },
      ]),
      [
        'storage.s3[0].name: required',
        'storage.s3[0].mountpoint: required',
        'storage.s3[0].endpoint: required (host or host:port)',
        'storage.s3[0].bucket: required',
        'storage.s3[1].name: "mem" is the name of a built-in filesystem',
        'storage.s3[1].mountpoint: "/memfs/x" lies under /memfs, which the server uses',
        'storage.s3[1].endpoint: must be host or host:port without scheme or path, got "http://host/x"',
        'storage.s3[1].bucket: must be 3 to 63 lower-case letters, digits, dots or hyphens, got "Bad_Bucket"',
        'storage.s3[2].name: must match ^[A-Za-z0-9_-]+$, got "a.b"',
        'storage.s3[2].auth: enabled, but neither username nor password is set',
        'storage.s3[3].mountpoint: "/" belongs to the disk filesystem',
        'storage.s3[4].name: "media" is already in use',
        'storage.s3[4].mountpoint: "/s3/deeper/more" overlaps the mountpoint "/s3/deeper" of another S3 filesystem',
      ],
    );
  });

  it('refuses to start with the problems, naming the env variable', async () => {
    await assert.rejects(
      loadConfig(
        { CORE_STORAGE_S3: 'https://k:very-secret@eu.s3.example.com/bucket?name=mem&mount=/api/x' },
        '/',
      ),
      (error: Error) => {
        assert.match(
          error.message,
          /storage\.s3\[0\]\.name \(env CORE_STORAGE_S3\): "mem" is the name of a built-in filesystem/,
        );
        assert.match(
          error.message,
          /storage\.s3\[0\]\.mountpoint \(env CORE_STORAGE_S3\): "\/api\/x" lies under \/api/,
        );
        assert.ok(!error.message.includes('very-secret'));
        return true;
      },
    );
  });

  it('hands the secrets inside the entries to the log mask (configSecrets), not the other fields', () => {
    const config = defaultConfig();
    config.storage.s3 = [
      ENTRY,
      {
        ...ENTRY,
        name: 'b',
        secret_access_key: 'second',
        auth: { enable: true, username: 'u', password: 'pw' },
      },
    ];
    const secrets = configSecrets(config);
    for (const secret of ['secret', 'second', 'pw']) assert.ok(secrets.includes(secret), secret);
    for (const plain of ['key', 'u', 'bucket']) assert.ok(!secrets.includes(plain), plain);
  });

  it('refuses router paths an S3 mountpoint would hide (the mounts are matched first), naming the route', () => {
    const config = defaultConfig();
    config.storage.s3 = [
      { ...ENTRY, mountpoint: '/ui' },
      { ...ENTRY, name: 'b', mountpoint: '/media/s3' },
    ];
    config.router.ui_path = '/srv/ui';
    config.router.routes = { '/media/*': '/srv/media', '/media/s3/old.m3u8': '/new.m3u8', '/media': '/x' };
    assert.deepEqual(
      validateConfig(config).filter((problem) => problem.startsWith('router.')),
      [
        'router.ui_path: served at /ui/, it overlaps the mountpoint "/ui" of storage.s3[0], which is served there',
        'router.routes: "/media/*" overlaps the mountpoint "/media/s3" of storage.s3[1], which is served there',
        'router.routes: "/media/s3/old.m3u8" overlaps the mountpoint "/media/s3" of storage.s3[1], which is served there',
      ],
    );
  });
});
