import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { EventReader } from '../events/event-reader.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startS3Endpoint, type S3Endpoint } from '../helpers/s3-endpoint.js';

/**
 * An S3 filesystem against a real S3 server (moto) on loopback (docs/storage.md#s3-filesystems):
 * configured by the reference's env form with an IP endpoint, served at its mountpoint and under
 * /api/v3/fs/<name>, its objects checked in the bucket itself.
 */
const AUTH = { username: 'uploader', password: 's3-mount-password-29' };
const basic = `Basic ${Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64')}`;

describe('an S3 filesystem', () => {
  let s3: S3Endpoint;
  let server: TestServer;
  let token: string;

  before(async () => {
    s3 = await startS3Endpoint();
    const [region, endpoint] = ['us-east-1', s3.endpoint];
    server = await startServer({
      config: {
        api: { auth: { enable: true, username: 'admin', password: 'admin-password-29' } },
        metrics: { enable: true, interval_sec: 1, range_sec: 60 },
      },
      env: {
        // `us-east-1.127.0.0.1:<port>`: a host WHATWG URL refuses, which the reference's parser takes.
        CORE_STORAGE_S3:
          `http://${s3.accessKeyId}:${s3.secretAccessKey}@${region}.${endpoint}/media-bucket` +
          `?name=media&mount=/s3&username=${AUTH.username}&password=${AUTH.password}`,
      },
    });
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin-password-29' }),
    });
    token = ((await login.json()) as { access_token: string }).access_token;
  });
  after(async () => {
    await server?.close();
    await s3?.stop();
  });

  const api = (method: string, path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${server.url}/api/v3${path}`, {
      ...init,
      method,
      headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    });

  it('reads the env form, creates the bucket, and is listed with type s3', async () => {
    assert.deepEqual(server.config.storage.s3, [
      {
        name: 'media',
        mountpoint: '/s3',
        auth: { enable: true, ...AUTH },
        endpoint: s3.endpoint,
        access_key_id: s3.accessKeyId,
        secret_access_key: s3.secretAccessKey,
        bucket: 'media-bucket',
        region: 'us-east-1',
        use_ssl: false,
      },
    ]);
    const buckets = await s3.direct.send(new ListBucketsCommand({}));
    assert.ok(buckets.Buckets?.some((bucket) => bucket.Name === 'media-bucket'));
    const list = await api('GET', '/fs');
    assert.deepEqual(
      ((await list.json()) as unknown[]).find((fs) => (fs as { name: string }).name === 'media'),
      { name: 'media', type: 's3', mount: '/s3' },
    );
  });

  it('publishes filesystem events for writes and deletes through the mountpoint, named by the filesystem', async () => {
    const reader = await EventReader.open(server.url, {
      format: 'json',
      headers: { authorization: `Bearer ${token}` },
      body: { filters: [{ type: 'filesystem' }] },
    });
    try {
      const file = `${server.url}/s3/events/note.txt`;
      const put = await fetch(file, { method: 'PUT', headers: { authorization: basic }, body: 'hello' });
      assert.equal(put.status, 201, await put.text());
      const removed = await fetch(file, { method: 'DELETE', headers: { authorization: basic } });
      assert.equal(removed.status, 200, await removed.text());
      await reader.until(
        (events) => events.some((event) => event.event === 'delete'),
        'the delete event of the S3 filesystem',
      );
      assert.deepEqual(
        reader.events.map((event) => [event.event, event.filesystem, event.path, event.bytes]),
        [
          ['write', 'media', '/events/note.txt', 5],
          ['delete', 'media', '/events/note.txt', 5],
        ],
      );
    } finally {
      reader.close();
    }
  });
  it('writes, reads with ranges and types, lists with glob/sort/order, and deletes through /api/v3/fs/media', async () => {
    const put = await api('PUT', '/fs/media/dir/a.m3u8', { body: '#EXTM3U\n' });
    assert.equal(put.status, 201, await put.text());
    const again = await api('PUT', '/fs/media/dir/a.m3u8', { body: '#EXTM3U\n#EXT-X-VERSION:3\n' });
    assert.equal(again.status, 204);
    assert.equal((await api('PUT', '/fs/media/dir/b.ts', { body: Buffer.alloc(3000, 7) })).status, 201);
    assert.equal((await api('PUT', '/fs/media/top.txt', { body: 'hello s3' })).status, 201);

    const object = await s3.direct.send(new GetObjectCommand({ Bucket: 'media-bucket', Key: 'dir/a.m3u8' }));
    assert.equal(await object.Body?.transformToString(), '#EXTM3U\n#EXT-X-VERSION:3\n');

    const read = await api('GET', '/fs/media/dir/a.m3u8');
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('content-type'), 'application/vnd.apple.mpegurl');
    assert.equal(await read.text(), '#EXTM3U\n#EXT-X-VERSION:3\n');
    const range = await api('GET', '/fs/media/top.txt', { headers: { range: 'bytes=2-5' } });
    assert.equal(range.status, 206);
    assert.equal(range.headers.get('content-range'), 'bytes 2-5/8');
    assert.equal(await range.text(), 'llo ');

    const listed = await api('GET', '/fs/media?glob=/dir/*&sort=size&order=desc');
    const files = (await listed.json()) as Array<{ name: string; size_bytes: number; last_modified: number }>;
    assert.deepEqual(
      files.map((file) => [file.name, file.size_bytes]),
      [
        ['/dir/b.ts', 3000],
        ['/dir/a.m3u8', 25],
      ],
    );
    assert.ok(files.every((file) => Math.abs(file.last_modified - Date.now() / 1000) < 120));
    // core-client-go's calls: FilesystemList sends every parameter, FilesystemHasFile is a HEAD.
    const asClient = await api('GET', '/fs/media?glob=&order=asc&sort=none');
    assert.equal(((await asClient.json()) as unknown[]).length, 3);
    assert.equal((await api('HEAD', '/fs/media/dir/b.ts')).status, 200);
    assert.equal((await api('HEAD', '/fs/media/dir/none.ts')).status, 404);
    const badSort = await api('GET', '/fs/media?sort=weight');
    assert.equal(badSort.status, 400);

    const deleted = await api('DELETE', '/fs/media/top.txt');
    assert.equal(deleted.status, 200);
    assert.equal(await deleted.text(), 'Deleted: /top.txt');
    assert.equal((await api('DELETE', '/fs/media/top.txt')).status, 404);
    assert.equal((await api('GET', '/fs/media/top.txt')).status, 404);
    assert.equal((await api('GET', '/fs/nothing/x')).status, 404);
  });

  it('reports filesystem_* with its name, following the writes through the server', async () => {
    const latest = async (name: string): Promise<number | undefined> => {
      const answer = await api('POST', '/metrics', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metrics: [{ name, labels: { name: '^media$' } }] }),
      });
      const body = (await answer.json()) as { metrics: { values: [number, number][] }[] };
      return body.metrics[0]?.values.at(-1)?.[1];
    };
    assert.equal((await api('PUT', '/fs/media/metrics/one.bin', { body: Buffer.alloc(5000) })).status, 201);
    const deadline = Date.now() + 15_000;
    let files: number | undefined;
    let bytes: number | undefined;
    // dir/a.m3u8 (25 bytes), dir/b.ts (3000) and metrics/one.bin (5000).
    while (Date.now() < deadline && !(files === 3 && bytes === 8025)) {
      files = await latest('filesystem_files');
      bytes = await latest('filesystem_usage');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(files, 3);
    assert.equal(bytes, 8025);
    assert.equal(await latest('filesystem_limit'), -1);
    assert.equal((await api('DELETE', '/fs/media/metrics/one.bin')).status, 200);
  });

  it('serves the mountpoint: reads for anyone, writes and deletes with its basic auth', async () => {
    const refused = await fetch(`${server.url}/s3/live/x.ts`, { method: 'PUT', body: 'x' });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /realm="media"/);
    const wrong = await fetch(`${server.url}/s3/live/x.ts`, {
      method: 'PUT',
      body: 'x',
      headers: { authorization: `Basic ${Buffer.from('uploader:nope').toString('base64')}` },
    });
    assert.equal(wrong.status, 401);
    const put = await fetch(`${server.url}/s3/live/x.ts`, {
      method: 'PUT',
      body: 'segment',
      headers: { authorization: basic },
    });
    assert.equal(put.status, 201, await put.text());
    const read = await fetch(`${server.url}/s3/live/x.ts`);
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('content-type')?.toLowerCase(), 'video/mp2t');
    assert.equal(await read.text(), 'segment');
    const head = await fetch(`${server.url}/s3/live/x.ts`, { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), '7');
    assert.equal((await fetch(`${server.url}/s3/live/x.ts`, { method: 'DELETE' })).status, 401);
    const gone = await fetch(`${server.url}/s3/live/x.ts`, {
      method: 'DELETE',
      headers: { authorization: basic },
    });
    assert.equal(gone.status, 200);
    assert.equal((await fetch(`${server.url}/s3/live/x.ts`)).status, 404);
    const listing = await s3.direct.send(
      new ListObjectsV2Command({ Bucket: 'media-bucket', Prefix: 'live/' }),
    );
    assert.equal(listing.KeyCount ?? 0, 0);
    // Paths outside the mount are the disk's as before.
    assert.equal((await fetch(`${server.url}/s3x/file`)).status, 404);
    assert.equal((await fetch(`${server.url}/nowhere`, { method: 'PUT', body: 'x' })).status, 404);
  });

  it('answers viewers of one segment or playlist from memory, not with one S3 request each', async () => {
    const segment = Buffer.alloc(200_000, 3);
    const put = await fetch(`${server.url}/s3/cache/seg1.ts`, {
      method: 'PUT',
      body: segment,
      headers: { authorization: basic },
    });
    assert.equal(put.status, 201);
    let before = s3.upstreamBytes();
    const reads = await Promise.all(
      Array.from({ length: 50 }, async () =>
        Buffer.from(await (await fetch(`${server.url}/s3/cache/seg1.ts`)).arrayBuffer()),
      ),
    );
    assert.ok(reads.every((read) => read.equals(segment)));
    assert.ok(
      s3.upstreamBytes() - before < 2000,
      `written through: ${s3.upstreamBytes() - before} bytes asked of S3`,
    );

    // Written by someone else: the first viewer's request reads it, the others share it.
    await s3.direct.send(
      new PutObjectCommand({ Bucket: 'media-bucket', Key: 'cache/seg2.ts', Body: segment }),
    );
    before = s3.upstreamBytes();
    const shared = await Promise.all(
      Array.from({ length: 50 }, async () => (await fetch(`${server.url}/s3/cache/seg2.ts`)).arrayBuffer()),
    );
    assert.ok(shared.every((read) => read.byteLength === segment.length));
    const asked = s3.upstreamBytes() - before;
    assert.ok(asked < segment.length + 5000, `read through: ${asked} bytes asked of S3 for 50 viewers`);
  });

  it('answers 502 when the endpoint is down and 504 when it hangs, within a bound, while other filesystems go on', async () => {
    await s3.direct.send(new PutObjectCommand({ Bucket: 'media-bucket', Key: 'cold/a.txt', Body: 'cold' }));
    s3.setMode('down');
    try {
      let started = Date.now();
      const down = await fetch(`${server.url}/s3/cold/a.txt`);
      assert.equal(down.status, 502);
      const envelope = (await down.json()) as { code: number; message: string; details: string[] };
      assert.equal(envelope.code, 502);
      assert.match(envelope.details.join(' '), /s3 filesystem "media": 127\.0\.0\.1:\d+/);
      assert.ok(Date.now() - started < 3000, `502 after ${Date.now() - started} ms`);
      assert.equal((await api('GET', '/fs/media')).status, 502);
      const write = await fetch(`${server.url}/s3/cold/b.txt`, {
        method: 'PUT',
        body: 'x',
        headers: { authorization: basic },
      });
      assert.equal(write.status, 502);

      s3.setMode('silent');
      started = Date.now();
      const hung = fetch(`${server.url}/s3/cold/a.txt`);
      // Meanwhile the disk and memory filesystems answer as ever.
      const other = Date.now();
      assert.equal((await api('GET', '/fs/mem')).status, 200);
      assert.equal((await api('GET', '/fs/disk')).status, 200);
      assert.ok(Date.now() - other < 1000, `other filesystems waited ${Date.now() - other} ms`);
      const timedOut = await hung;
      assert.equal(timedOut.status, 504);
      assert.match(
        ((await timedOut.json()) as { details: string[] }).details.join(' '),
        /did not answer in time/,
      );
      assert.ok(Date.now() - started < 9000, `504 after ${Date.now() - started} ms`);
    } finally {
      s3.setMode('up');
    }
    const back = await fetch(`${server.url}/s3/cold/a.txt`);
    assert.equal(back.status, 200);
    assert.equal(await back.text(), 'cold');
  });

  it('answers 502 to an upload whose endpoint goes away mid-stream, and takes the next one', async () => {
    let release: () => void = () => undefined;
    const halfway = new Promise<void>((resolve) => (release = resolve));
    const chunk = Buffer.alloc(1024 * 1024, 1);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 12) {
          release();
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        if (sent >= 24) return controller.close();
        sent++;
        controller.enqueue(chunk);
      },
    });
    const started = Date.now();
    const upload = fetch(`${server.url}/s3/mid/stream.bin`, {
      method: 'PUT',
      body,
      headers: { authorization: basic },
      duplex: 'half',
    });
    // An upload answered early (refused) never gets halfway.
    await Promise.race([halfway, upload]);
    s3.setMode('down');
    try {
      const answer = await upload.then(
        (response) => response.status,
        (error: Error) => error.message,
      );
      assert.equal(answer, 502);
      assert.ok(Date.now() - started < 15_000, `answered after ${Date.now() - started} ms`);
    } finally {
      s3.setMode('up');
    }
    const next = await fetch(`${server.url}/s3/mid/next.txt`, {
      method: 'PUT',
      body: 'ok',
      headers: { authorization: basic },
    });
    assert.equal(next.status, 201);
  });
});
