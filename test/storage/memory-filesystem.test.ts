import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryFilesystem } from '../../src/storage/memory-filesystem.js';
import type { StorageError } from '../../src/storage/errors.js';

function memfs(maxSizeBytes: number, purge: boolean, clock = { now: 1000 }): MemoryFilesystem {
  return new MemoryFilesystem({
    maxSizeBytes,
    purge,
    now: () => clock.now,
    onListenerError: () => undefined,
  });
}

describe('MemoryFilesystem', () => {
  it('keeps a right-sized caller buffer as the one stored copy and serves views of it', async () => {
    const fs = memfs(0, false);
    // Not `Buffer.from('…')`: a short one is a slice of the shared pool, which memfs copies (below).
    const data = Buffer.allocUnsafeSlow(10);
    data.write('0123456789');
    assert.deepEqual(fs.store('/a.ts', data), { created: true });
    const file = await fs.open('/a.ts');
    assert.ok(file);
    const part = file.body(2, 4) as Buffer;
    assert.equal(part.toString(), '234');
    assert.equal(part.buffer, data.buffer, 'a range is a view, not a copy');
    assert.equal(await file.readAll(), data);
    // A large body as fastify builds it (Buffer.concat of the received chunks) is its own allocation.
    const large = Buffer.concat([Buffer.alloc(40_000, 1), Buffer.alloc(30_000, 2)]);
    fs.store('/b.ts', large);
    assert.equal(await (await fs.open('/b.ts'))?.readAll(), large, 'stored as is, not copied');
  });

  it('copies a small body that is a slice of the shared buffer pool once, into memory of its own size', async () => {
    const fs = memfs(0, false);
    // How fastify's body parser builds a short body: Buffer.concat takes it from Node's 8 KiB pool.
    const body = Buffer.concat([Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\n'), Buffer.from('live0.ts\n')]);
    assert.ok(
      body.buffer.byteLength >= 4 * body.length,
      `precondition: a pool slice (${body.buffer.byteLength})`,
    );
    fs.store('/live.m3u8', body);
    const file = await fs.open('/live.m3u8');
    assert.ok(file);
    const stored = await file.readAll();
    assert.deepEqual(stored, body);
    assert.equal(stored.buffer.byteLength, body.length, 'the stored copy pins exactly its own bytes');
    assert.notEqual(stored.buffer, body.buffer);
    assert.deepEqual(await fs.usage(), { usage_bytes: body.length, files: 1, limit_bytes: -1 });
    // That one copy is what every viewer gets: views of it, not copies per request.
    const again = await fs.open('/live.m3u8');
    assert.equal(await again?.readAll(), stored);
    assert.equal((again?.body(8, 12) as Buffer).buffer, stored.buffer);
  });

  it('counts usage and files, replaces on overwrite, reports -1 when unlimited', async () => {
    const fs = memfs(0, false);
    fs.store('/a', Buffer.alloc(10));
    fs.store('/b', Buffer.alloc(5));
    assert.deepEqual(fs.store('/a', Buffer.alloc(3)), { created: false });
    assert.deepEqual(await fs.usage(), { usage_bytes: 8, files: 2, limit_bytes: -1 });
    assert.equal(await fs.remove('/a'), true);
    assert.equal(await fs.remove('/a'), false);
    assert.deepEqual(await fs.usage(), { usage_bytes: 5, files: 1, limit_bytes: -1 });
  });

  it('refuses a file larger than the limit, and a write without room when purge is off', () => {
    const fs = memfs(100, false);
    assert.throws(
      () => fs.store('/big', Buffer.alloc(101)),
      (e: unknown) => (e as StorageError).code === 'TOO_LARGE',
    );
    fs.store('/a', Buffer.alloc(60));
    assert.throws(
      () => fs.store('/b', Buffer.alloc(50)),
      (e: unknown) => (e as StorageError).code === 'NO_SPACE',
    );
    // Overwriting frees the old size first.
    fs.store('/a', Buffer.alloc(100));
  });

  it('purges the oldest files (by last write) until the new one fits', async () => {
    const clock = { now: 1000 };
    const fs = memfs(100, true, clock);
    for (const name of ['/a', '/b', '/c']) {
      clock.now += 1000;
      fs.store(name, Buffer.alloc(30));
    }
    clock.now += 1000;
    fs.store('/a', Buffer.alloc(30)); // /a is now the newest
    fs.store('/d', Buffer.alloc(40)); // needs 30 more bytes: /b goes
    assert.deepEqual(
      (await fs.list()).map((f) => f.name),
      ['/c', '/a', '/d'],
    );
    fs.store('/e', Buffer.alloc(90)); // everything else goes
    assert.deepEqual(
      (await fs.list()).map((f) => f.name),
      ['/e'],
    );
  });

  it('lists with a glob and tells write listeners the path and size', async () => {
    const fs = memfs(0, false);
    const seen: [string, number][] = [];
    const off = fs.onWrite((path, bytes) => seen.push([path, bytes]));
    fs.onWrite(() => {
      throw new Error('a broken listener does not break the write');
    });
    fs.store('/cam1.m3u8', Buffer.alloc(7));
    fs.store('/cam1_0.ts', Buffer.alloc(9));
    off();
    fs.store('/cam1_1.ts', Buffer.alloc(9));
    assert.deepEqual(seen, [
      ['/cam1.m3u8', 7],
      ['/cam1_0.ts', 9],
    ]);
    assert.deepEqual(
      (await fs.list('/cam1_*.ts')).map((f) => f.name),
      ['/cam1_0.ts', '/cam1_1.ts'],
    );
  });
});
