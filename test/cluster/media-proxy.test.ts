import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startNode, type ClusterNode } from './cluster-nodes.js';
import { EtcdMembers } from './etcd-members.js';

/** The sockets (inodes) of the established connections process `pid` holds to a local `port`. */
function connectionsTo(pid: number, port: number): Set<string> {
  const inodes = new Set<string>();
  for (const name of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/net/${name}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const remotePort = parseInt(fields[2]?.split(':').at(-1) ?? '', 16);
      if (fields[3] === '01' && remotePort === port) inodes.add(fields[9] ?? '');
    }
  }
  const dir = `/proc/${pid}/fd`;
  const held = new Set<string>();
  for (const fd of readdirSync(dir)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(join(dir, fd)))?.[1];
      if (inode !== undefined && inodes.has(inode)) held.add(inode);
    } catch {
      // The descriptor closed meanwhile.
    }
  }
  return held;
}

describe('a node with cluster.media=proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-media-proxy-'));
  let etcd: EtcdMembers;
  let holder: ClusterNode;
  let proxy: ClusterNode;
  /** A proxy whose connections are closed after 2 s silent both ways (`api.timeouts.idle_sec`). */
  let impatient: ClusterNode;
  const segment = randomBytes(200_000);
  const clip = randomBytes(3_000_000);
  const long = randomBytes(32_000_000);

  before(async () => {
    etcd = await EtcdMembers.start(join(dir, 'etcd'), 1);
    holder = await startNode(dir, 'h', etcd.endpoints, 8, { CORE_STORAGE_MEMORY_AUTH_ENABLE: 'false' });
    proxy = await startNode(dir, 'p', etcd.endpoints, 8, { CORE_CLUSTER_MEDIA: 'proxy' });
    impatient = await startNode(dir, 'i', etcd.endpoints, 8, {
      CORE_CLUSTER_MEDIA: 'proxy',
      CORE_API_TIMEOUTS_IDLE_SEC: '2',
    });
    const put = await fetch(`${holder.url}/memfs/live/seg1.ts`, { method: 'PUT', body: segment });
    assert.equal(put.status, 201);
    mkdirSync(join(dir, 'h', 'data', 'vod'), { recursive: true });
    writeFileSync(join(dir, 'h', 'data', 'vod', 'clip.mp4'), clip);
    writeFileSync(join(dir, 'h', 'data', 'vod', 'long.mp4'), long);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const about = (await (await fetch(`${proxy.url}/api/v3/cluster`)).json()) as { nodes?: unknown[] };
      if (about.nodes?.length === 3) break;
      if (Date.now() > deadline) throw new Error('the nodes do not see each other');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  after(async () => {
    for (const node of [holder, proxy, impatient]) {
      node?.run.child.kill('SIGCONT');
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

  // Last: it stops the holder for a few seconds.
  it("cuts the player's answer when the holder hangs mid-body (api.timeouts.idle_sec)", async () => {
    const response = await fetch(`${impatient.url}/vod/long.mp4`, { redirect: 'manual' });
    assert.equal(response.status, 200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = 0;
    while (received < 1_000_000) received += (await reader.read()).value?.length ?? 0;
    const holderPort = Number(new URL(holder.url).port);
    const whileFetching = connectionsTo(impatient.pid, holderPort);
    // The holder hangs; what is in the buffers arrives, then nothing: the player's connection is
    // silent both ways, which `api.timeouts.idle_sec` (2 s here) ends.
    holder.run.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      const reading = (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return 'complete';
          received += value.length;
        }
      })().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
      const hung = new Promise<string>((resolve) =>
        setTimeout(() => resolve('still hanging after 20 s'), 20_000).unref(),
      );
      const ended = await Promise.race([reading, hung]);
      assert.notEqual(ended, 'still hanging after 20 s');
      assert.notEqual(ended, 'complete', 'the body was complete although the holder was stopped');
      assert.ok(received < long.length, `received ${received} of ${long.length} bytes`);
      const tookMs = Date.now() - stoppedAt;
      assert.ok(tookMs < 15_000, `the stalled answer was cut after ${tookMs} ms`);
      // The fetch from the holder goes with it. Other connections may come and stay (a stopped
      // process's listener still completes handshakes), so the fetch's own sockets are followed.
      const deadline = Date.now() + 10_000;
      const stillOpen = (): string[] =>
        [...connectionsTo(impatient.pid, holderPort)].filter((inode) => whileFetching.has(inode));
      while (stillOpen().length > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(stillOpen(), [], 'the proxy kept its connection to the holder');
    } finally {
      holder.run.child.kill('SIGCONT');
    }
  });
});
