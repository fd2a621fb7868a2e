// test-alone: three servers on one etcd, a dozen encoders and a burst of 400 requests; it samples every encoder from /proc
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
import { EtcdMembers } from './etcd-members.js';
import { etcdReads } from './etcd-reads.js';

const LEASE_TTL_SEC = 8;
/** Requests for ids no node has, all at once, in the test of the reads they cost. */
const UNKNOWN_IDS = 400;
/** The leader's pause between two waves of rebalancing (src/cluster/cluster.ts), ms. */
const REBALANCE_PAUSE_MS = 2000;

/** A process writing HLS to its node's memfs, which the linked processes read. */
function sourceBody(id: string): Record<string, unknown> {
  const body = processBody(id);
  const options = ['-metadata', `title=${marker(id)}`, '-c:v', 'mpeg2video', '-f', 'hls', '-hls_time', '1'];
  body.output = [{ id: 'out', address: `{memfs}/${id}.m3u8`, options }];
  return body;
}

/** A process reading the output of `source` (`#source:output=out`). */
function readerBody(id: string, source: string): Record<string, unknown> {
  return { ...processBody(id), input: [{ id: 'in', address: `#${source}:output=out`, options: [] }] };
}

describe('placement in a streamcore cluster', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-placement-'));
  let etcd: EtcdMembers;
  const nodes: ClusterNode[] = [];
  let checker: DuplicateChecker;
  const running: string[] = [];
  const linked = ['src', 'reader1', 'reader2'];

  const list = async (): Promise<ProcessAnswer[]> =>
    (await call(`${nodes[0]!.url}/api/v3/process?filter=state`)).json as unknown as ProcessAnswer[];
  const nodeOf = (answers: ProcessAnswer[], id: string): string | undefined =>
    answers.find((process) => process.id === id)?.core_id;
  /** Whether all of `expected` run in `answers`, each on a node of `on` with one encoder. */
  const run = async (answers: ProcessAnswer[], expected: string[], on: string[]): Promise<boolean> => {
    const census = await encodersByProcess();
    return expected.every((id) => {
      const process = answers.find((candidate) => candidate.id === id);
      return (
        process?.state?.exec === 'running' &&
        on.includes(process.core_id ?? '') &&
        census.get(id)?.length === 1
      );
    });
  };
  const allRunning = (on: string[]) =>
    until(`${running.length} processes running on ${on.join(',')}`, 40_000, async () => {
      const answers = await list();
      return (await run(answers, running, on)) ? answers : undefined;
    });
  const together = (answers: ProcessAnswer[]): void => {
    const where = new Set(linked.map((id) => nodeOf(answers, id)));
    assert.equal(where.size, 1, `linked processes on ${[...where].join(',')}`);
  };

  before(async () => {
    // One member: placement needs etcd's answers, not its failures.
    etcd = await EtcdMembers.start(join(dir, 'etcd'), 1);
    for (const id of ['a', 'b', 'c'])
      nodes.push(
        await startNode(dir, id, etcd.endpoints, LEASE_TTL_SEC, {
          CORE_CLUSTER_REFERENCE_PLACEMENT: 'spread',
        }),
      );
    checker = new DuplicateChecker();
    await untilOneLeader(nodes.map((node) => node.url));
  });

  after(async () => {
    await checker?.stop();
    for (const node of nodes) {
      node.run.child.kill('SIGTERM');
      await node.run.exited;
    }
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a process that reads another's output on that process's node, through whichever node it was created", async () => {
    assert.equal((await call(`${nodes[0]!.url}/api/v3/process`, 'POST', sourceBody('src'))).status, 200);
    for (const [index, id] of ['reader1', 'reader2'].entries()) {
      const created = await call(`${nodes[index + 1]!.url}/api/v3/process`, 'POST', readerBody(id, 'src'));
      assert.equal(created.status, 200, JSON.stringify(created.json));
    }
    running.push(...linked);
    together(await allRunning(['a', 'b', 'c']));
  });

  it('spreads the processes of one reference over the nodes when asked, also onto the busiest', async () => {
    // The linked processes make one node the busiest: by load alone none of these would go there.
    const before = await list();
    const busiest = nodeOf(before, 'src');
    assert.deepEqual(
      before.map((process) => process.core_id),
      [busiest, busiest, busiest],
      'the linked processes alone, on one node',
    );
    for (const [index, id] of ['show0', 'show1', 'show2'].entries()) {
      const body = { ...processBody(id), reference: 'show', autostart: false };
      assert.equal((await call(`${nodes[index]!.url}/api/v3/process`, 'POST', body)).status, 200);
    }
    const answers = await list();
    const where = ['show0', 'show1', 'show2'].map((id) => nodeOf(answers, id));
    assert.deepEqual(new Set(where).size, 3, `show processes on ${where.join(',')}`);
  });

  it('reads etcd a bounded number of times for ids no node has, yet finds at once what another node created', async (t) => {
    for (let index = 0; index < 6; index++) {
      const id = `fresh${index}`;
      const body = { ...processBody(id), autostart: false };
      assert.equal((await call(`${nodes[index % 3]!.url}/api/v3/process`, 'POST', body)).status, 200);
      const read = await call(`${nodes[(index + 1) % 3]!.url}/api/v3/process/${id}`);
      assert.equal(read.status, 200, `${id} through another node: ${JSON.stringify(read.json)}`);
      assert.ok(read.json.core_id);
      assert.equal((await call(`${nodes[(index + 2) % 3]!.url}/api/v3/process/${id}`, 'DELETE')).status, 200);
    }
    const readsBefore = await etcdReads(etcd.endpoints);
    const startedAt = Date.now();
    const answers = await Promise.all(
      Array.from({ length: UNKNOWN_IDS }, async (_, index) => {
        const response = await fetch(`${nodes[0]!.url}/api/v3/process/nobody-${index}/state`);
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const elapsed = Date.now() - startedAt;
    const reads = (await etcdReads(etcd.endpoints)) - readsBefore;
    t.diagnostic(`${UNKNOWN_IDS} requests for unknown ids in ${elapsed} ms: ${reads} etcd reads in all`);
    assert.deepEqual(new Set(answers), new Set([404]));
    // The nodes' own reads (three, two a second each) and at most ten a second for requests.
    const bound = Math.ceil((elapsed / 1000 + 1) * 20);
    assert.ok(reads <= bound && reads < UNKNOWN_IDS, `${reads} etcd reads, more than ${bound}`);
  });

  it('moves a few processes back to a node that is online again, calmly, never two encoders for one', async (t) => {
    for (let index = 0; index < 6; index++) {
      assert.equal(
        (await call(`${nodes[0]!.url}/api/v3/process`, 'POST', processBody(`p${index}`))).status,
        200,
      );
      running.push(`p${index}`);
    }
    const drained = nodeOf(await allRunning(['a', 'b', 'c']), 'src') as string;
    const others = ['a', 'b', 'c'].filter((id) => id !== drained);
    const state = (to: string) =>
      call(`${nodes[0]!.url}/api/v3/cluster/node/${drained}/state`, 'PUT', { state: to });
    assert.equal((await state('maintenance')).status, 200);
    // The linked processes move as one.
    together(await allRunning(others));
    assert.equal((await state('online')).status, 200);
    const counts = await until('processes back on the node, none moving', 30_000, async () => {
      const settled = await settledCounts(nodes[0]!.url, async (answers) =>
        run(answers, running, ['a', 'b', 'c']),
      );
      const values = [...(settled?.values() ?? [])];
      const even = values.length === 3 && Math.max(...values) - Math.min(...values) <= 1;
      return even && (settled?.get(drained) ?? 0) >= 2 ? settled : undefined;
    });
    t.diagnostic(`processes per node after rebalancing: ${JSON.stringify([...counts])}`);
    // At rest: past the leader's pause between waves nothing moves any more.
    const census = await encodersByProcess();
    await new Promise((resolve) => setTimeout(resolve, REBALANCE_PAUSE_MS + 1500));
    assert.deepEqual(await encodersByProcess(), census);
    together(await list());
    await checker.stop();
    assert.ok(checker.samples > 50, `only ${checker.samples} samples`);
    assert.deepEqual(checker.duplicates, []);
  });
});
