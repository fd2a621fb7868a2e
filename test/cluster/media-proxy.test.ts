import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type ClusterNode } from './cluster-nodes.js';
import { EtcdMembers } from './etcd-members.js';

describe('a node with cluster.media=proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-media-proxy-'));
  let etcd: EtcdMembers;
  let holder: ClusterNode;
  let proxy: ClusterNode;
  const segment = randomBytes(200_000);
  const clip = randomBytes(3_000_000);

  before(async () => {
    etcd = await EtcdMembers.start(join(dir, 'etcd'), 1);
    holder = await startNode(dir, 'h', etcd.endpoints, 8, { CORE_STORAGE_MEMORY_AUTH_ENABLE: 'false' });
    proxy = await startNode(dir, 'p', etcd.endpoints, 8, { CORE_CLUSTER_MEDIA: 'proxy' });
    const put = await fetch(`${holder.url}/memfs/live/seg1.ts`, { method: 'PUT', body: segment });
    assert.equal(put.status, 201);
    mkdirSync(join(dir, 'h', 'data', 'vod'), { recursive: true });
    writeFileSync(join(dir, 'h', 'data', 'vod', 'clip.mp4'), clip);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const about = (await (await fetch(`${proxy.url}/api/v3/cluster`)).json()) as { nodes?: unknown[] };
      if (about.nodes?.length === 2) break;
      if (Date.now() > deadline) throw new Error('the nodes do not see each other');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    for (const node of [holder, proxy]) {
      node?.run.child.kill('SIGTERM');
      await node?.run.exited;
    }
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a memfs file another node has itself, with its type and length, and 404 for one none has', async () => {
    const direct = await fetch(`${holder.url}/memfs/live/seg1.ts`);
    await direct.arrayBuffer();
    const proxied = await fetch(`${proxy.url}/memfs/live/seg1.ts`, { redirect: 'manual' });
    assert.equal(proxied.status, 200);
    assert.equal(proxied.headers.get('content-type'), direct.headers.get('content-type'));
    assert.deepEqual(Buffer.from(await proxied.arrayBuffer()), segment);
    const head = await fetch(`${proxy.url}/memfs/live/seg1.ts`, { method: 'HEAD', redirect: 'manual' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(segment.length));
    const missing = await fetch(`${proxy.url}/memfs/live/nowhere.ts`, { redirect: 'manual' });
    assert.equal(missing.status, 404);
  });

  it('streams a disk file another node has', async () => {
    const proxied = await fetch(`${proxy.url}/vod/clip.mp4`, { redirect: 'manual' });
    assert.equal(proxied.status, 200);
    assert.deepEqual(Buffer.from(await proxied.arrayBuffer()), clip);
  });
});
