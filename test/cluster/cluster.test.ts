// test-alone: three servers, three etcd members and a dozen encoders; its timings are failover deadlines
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  call,
  processBody,
  settledCounts,
  until,
  untilOneLeader,
  type ProcessAnswer,
} from './cluster-calls.js';
import { startNode, type ClusterNode } from './cluster-nodes.js';
import { DuplicateChecker, encodersByProcess, marker } from './encoder-census.js';
import { freePort } from '../helpers/free-port.js';
import { EtcdMembers } from './etcd-members.js';

/** The target: a dead node's processes run elsewhere within this (lease time + start). */
const FAILOVER_TARGET_MS = 15_000;
const LEASE_TTL_SEC = 8;

describe('a streamcore cluster on etcd', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-cluster-'));
  let etcd: EtcdMembers;
  const nodes = new Map<string, ClusterNode>();
  let checker: DuplicateChecker;
  const ids = Array.from({ length: 9 }, (_, index) => `p${index}`);

  const live = (): ClusterNode[] => [...nodes.values()];
  const any = (): ClusterNode => live()[0] as ClusterNode;
  /** Whether all of `expected` run in `list`, each on a node of `on` with one encoder. */
  const run = async (list: ProcessAnswer[], expected: string[], on: string[]): Promise<boolean> => {
    const running = list.filter((p) => p.state?.exec === 'running' && on.includes(p.core_id ?? ''));
    const census = await encodersByProcess();
    return expected.every((id) => running.some((p) => p.id === id) && census.get(id)?.length === 1);
  };
  /** All of `expected` run, each on a node of `on`; the list as any node answers it. */
  const allRunning = (expected: string[], on: string[], through = any()) =>
    until(`${expected.length} processes running on ${on.join(',')}`, FAILOVER_TARGET_MS * 2, async () => {
      const { status, json } = await call(`${through.url}/api/v3/process?filter=state`);
      if (status !== 200) return undefined;
      const list = json as unknown as ProcessAnswer[];
      return (await run(list, expected, on)) ? list : undefined;
    });

  before(async () => {
    etcd = await EtcdMembers.start(join(dir, 'etcd'));
    for (const id of ['a', 'b', 'c']) nodes.set(id, await startNode(dir, id, etcd.endpoints, LEASE_TTL_SEC));
    checker = new DuplicateChecker();
    // Every node knows the others and the leader (which places every create).
    await untilOneLeader(live().map((node) => node.url));
  });

  after(async () => {
    await checker?.stop();
    for (const node of nodes.values()) {
      node.run.child.kill('SIGCONT');
      node.run.child.kill('SIGTERM');
      const exit = await node.run.exited;
      if (process.env.HC_LOGS)
        (await import('node:fs')).writeFileSync(`${process.env.HC_LOGS}/${node.id}.log`, exit.stdout);
    }
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('places processes created through different nodes on all of them, and answers for each on every node', async () => {
    const all = live();
    for (const [index, id] of ids.entries()) {
      const { status } = await call(`${all[index % 3]!.url}/api/v3/process`, 'POST', processBody(id));
      assert.equal(status, 200);
    }
    const list = await allRunning(ids, ['a', 'b', 'c']);
    const perNode = new Map<string, number>();
    for (const process of list) perNode.set(process.core_id!, (perNode.get(process.core_id!) ?? 0) + 1);
    assert.deepEqual([...perNode.values()].sort(), [3, 3, 3], JSON.stringify([...perNode]));

    // The same answers through any node: a process, its config, a duplicate id, an unknown id.
    const owner = list.find((p) => p.id === 'p0')!.core_id!;
    const other = all.find((node) => node.id !== owner)!;
    const direct = await call(`${nodes.get(owner)!.url}/api/v3/process/p0/config`);
    const forwarded = await call(`${other.url}/api/v3/process/p0/config`);
    assert.deepEqual(forwarded, direct);
    // The reference's cluster routes answer the same (core-client-go's `cluster` branch calls them).
    assert.deepEqual(await call(`${other.url}/api/v3/cluster/process/p0/config`), direct);
    const one = await call(`${other.url}/api/v3/process/p0`);
    assert.equal(one.json.core_id, owner);
    const again = await call(`${other.url}/api/v3/process`, 'POST', processBody('p0'));
    assert.equal(again.status, 400);
    assert.match(JSON.stringify(again.json.details), /already exists/);
    const unknown = await call(`${other.url}/api/v3/process/nope/state`);
    assert.equal(unknown.status, 404);
    const metadata = await call(`${other.url}/api/v3/process/p0/metadata/note`, 'PUT', { hello: 1 });
    assert.equal(metadata.status, 200);
    assert.deepEqual((await call(`${nodes.get(owner)!.url}/api/v3/process/p0/metadata/note`)).json, {
      hello: 1,
    });
  });

  it('redirects a player that asks any node for a memfs file to the node that writes it', async () => {
    const body = processBody('hls0');
    body.output = [
      {
        id: 'out',
        address: '{memfs}/hls0.m3u8',
        options: [
          '-metadata',
          `title=${marker('hls0')}`,
          '-c:v',
          'mpeg2video',
          '-f',
          'hls',
          '-hls_time',
          '1',
        ],
      },
    ];
    assert.equal((await call(`${any().url}/api/v3/process`, 'POST', body)).status, 200);
    ids.push('hls0');
    const list = await allRunning(ids, ['a', 'b', 'c']);
    const owner = nodes.get(list.find((p) => p.id === 'hls0')!.core_id!)!;
    const other = live().find((node) => node.id !== owner.id)!;
    const redirected = await until('the playlist', 20_000, async () => {
      const response = await fetch(`${other.url}/memfs/hls0.m3u8`, { redirect: 'manual' });
      await response.arrayBuffer();
      return response.status === 307 ? response : undefined;
    });
    assert.equal(redirected.headers.get('location'), `${owner.url}/memfs/hls0.m3u8`);
    const followed = await fetch(`${other.url}/memfs/hls0.m3u8`);
    assert.equal(followed.status, 200);
    assert.match(await followed.text(), /#EXTM3U/);
    const missing = await fetch(`${other.url}/memfs/nowhere.m3u8`, { redirect: 'manual' });
    assert.equal(missing.status, 404);
  });

  it('advertises the new address of a node whose reload moved its listener', async () => {
    const moving = nodes.get('c')!;
    const port = await freePort();
    const moved = `http://127.0.0.1:${port}`;
    assert.equal(
      (await call(`${moving.url}/api/v3/config`, 'PUT', { version: 3, address: `127.0.0.1:${port}` })).status,
      200,
    );
    assert.equal((await call(`${moving.url}/api/v3/config/reload`)).status, 200);
    nodes.set('c', { ...moving, url: moved });
    await until('node c at its new address on every node', 10_000, async () => {
      const answers = await Promise.all(
        live().map(async (node) => (await call(`${node.url}/api/v3/cluster`)).json),
      );
      return answers.every((json) => json.nodes?.find((node) => node.id === 'c')?.address === moved)
        ? answers
        : undefined;
    });
  });

  it('runs the processes of a node killed with SIGKILL elsewhere within the target', async (t) => {
    const victim = nodes.get('b')!;
    const startedAt = Date.now();
    victim.run.child.kill('SIGKILL');
    const exit = await victim.run.exited;
    if (process.env.HC_LOGS)
      (await import('node:fs')).writeFileSync(`${process.env.HC_LOGS}/b-killed.log`, exit.stdout);
    nodes.delete('b');
    await allRunning(ids, ['a', 'c']);
    const elapsed = Date.now() - startedAt;
    assert.ok(elapsed < FAILOVER_TARGET_MS, `failover took ${elapsed} ms`);
    t.diagnostic(`failover after kill -9: ${elapsed} ms`);
    // Its definitions are whole: the metadata written before went with it.
    assert.deepEqual((await call(`${any().url}/api/v3/process/p0/metadata/note`)).json, { hello: 1 });
    nodes.set('b', await startNode(dir, 'b', etcd.endpoints, LEASE_TTL_SEC));
  });

  it('drains a node: its processes move away, none come back until it is online again, then some do', async () => {
    const drained = await call(`${any().url}/api/v3/cluster/node/a/state`, 'PUT', { state: 'maintenance' });
    assert.deepEqual(drained, { status: 200, json: { state: 'maintenance' } });
    await allRunning(ids, ['b', 'c']);
    const about = await call(`${nodes.get('c')!.url}/api/v3/cluster`);
    assert.equal(about.json.nodes?.find((node) => node.id === 'a')?.status, 'maintenance');
    const created = await call(`${nodes.get('a')!.url}/api/v3/process`, 'POST', processBody('p9'));
    assert.equal(created.status, 200);
    ids.push('p9');
    await allRunning(ids, ['b', 'c']);
    const bad = await call(`${any().url}/api/v3/cluster/node/a/state`, 'PUT', { state: 'sleeping' });
    assert.equal(bad.status, 400);
    const online = await call(`${any().url}/api/v3/cluster/node/a/state`, 'PUT', { state: 'online' });
    assert.equal(online.status, 200);
    // Some come back (rebalance.ts), a few at a time, until no node has two more than another.
    await until('processes back on a, none moving', 30_000, async () => {
      const counts = await settledCounts(any().url, (list) => run(list, ids, ['a', 'b', 'c']));
      const values = [...(counts?.values() ?? [])];
      const even = values.length === 3 && Math.max(...values) - Math.min(...values) <= 1;
      return even && (counts?.get('a') ?? 0) >= 2 ? counts : undefined;
    });
  });

  it('goes on without interruption when one etcd member dies', async () => {
    const before = await encodersByProcess();
    await etcd.killMember(0);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const created = await call(`${nodes.get('c')!.url}/api/v3/process`, 'POST', processBody('p10'));
    assert.equal(created.status, 200);
    ids.push('p10');
    await allRunning(ids, ['a', 'b', 'c']);
    const census = await encodersByProcess();
    for (const [id, pids] of before) assert.deepEqual(census.get(id), pids, `${id} was restarted`);
  });

  it('keeps encoders running and refuses changes with 503 while etcd has no quorum, and heals', async () => {
    const before = await encodersByProcess();
    await etcd.killMember(1);
    const refused = await until('a write refused', 10_000, async () => {
      const answer = await call(`${any().url}/api/v3/process/p1/command`, 'PUT', { command: 'restart' });
      return answer.status === 503 ? answer : undefined;
    });
    assert.match(JSON.stringify(refused.json.details), /etcd/);
    // Longer than a lease: every node knows from the others that nobody can reach etcd.
    await new Promise((resolve) => setTimeout(resolve, (LEASE_TTL_SEC + 3) * 1000));
    const read = await call(`${nodes.get('c')!.url}/api/v3/process/p1/state`);
    assert.equal(read.status, 200);
    assert.equal(read.json.exec, 'running');
    assert.deepEqual(await encodersByProcess(), before);
    etcd.startMember(0);
    etcd.startMember(1);
    await etcd.waitHealthy(30_000);
    await until('writes accepted again', 20_000, async () => {
      const answer = await call(`${any().url}/api/v3/process/p1/metadata/healed`, 'PUT', true);
      if (answer.status !== 200) throw new Error(JSON.stringify(answer));
      return answer;
    });
    await allRunning(ids, ['a', 'b', 'c']);
  });

  it('fences a paused node: its encoders stop before they run elsewhere, and it rejoins when resumed', async () => {
    const list = await allRunning(ids, ['a', 'b', 'c']);
    const paused = nodes.get('c')!;
    const itsProcesses = list.filter((p) => p.core_id === 'c').map((p) => p.id);
    assert.ok(itsProcesses.length > 0);
    paused.run.child.kill('SIGSTOP');
    nodes.delete('c');
    await allRunning(ids, ['a', 'b']);
    paused.run.child.kill('SIGCONT');
    nodes.set('c', paused);
    await until('the resumed node back in the cluster', 20_000, async () => {
      const { json } = await call(`${paused.url}/api/v3/cluster`);
      return json.nodes?.some((node) => node.id === 'c') ? json : undefined;
    });
    await allRunning(ids, ['a', 'b', 'c']);
  });

  it('never ran two encoders for one process', async () => {
    await checker.stop();
    assert.ok(checker.samples > 100, `only ${checker.samples} samples`);
    assert.deepEqual(checker.duplicates, []);
  });
});
