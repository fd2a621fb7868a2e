/**
 * The cluster's figures (issue 27), on a real 3-member etcd and three streamcore nodes as child
 * processes, all on this machine:
 *   - burst:    time from one burst of COUNT creates (spread over the three nodes, 8 at a time)
 *               until every process runs;
 *   - latency:  median time of `GET /api/v3/process/:id/state` asked of a node that does not run
 *               the process (forwarded) against the node that does (local), same run;
 *   - failover: time from `kill -9` of the node with the most processes until all run again.
 * Every encoder is a cheap `-re` lavfi source into the null muxer. The machine is shared: read the
 * figures as orders of magnitude and the latency as a ratio.
 *
 * Run: node --import tsx bench/cluster.ts [COUNT=30]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startNode, type ClusterNode } from '../test/cluster/cluster-nodes.js';
import { EtcdMembers } from '../test/cluster/etcd-members.js';

const COUNT = Number(process.argv[2] ?? 30);
const TTL = 8;

interface Listed {
  id: string;
  core_id: string;
  state: { exec: string };
}

const body = (id: string) =>
  JSON.stringify({
    id,
    input: [{ id: 'in', address: 'testsrc=size=32x24:rate=2', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    autostart: true,
  });

async function list(node: ClusterNode): Promise<Listed[]> {
  const response = await fetch(`${node.url}/api/v3/process?filter=state`);
  return response.ok ? ((await response.json()) as Listed[]) : [];
}

async function allRunning(node: ClusterNode, ids: string[], exclude?: string): Promise<void> {
  for (;;) {
    const running = new Set(
      (await list(node).catch(() => []))
        .filter((p) => p.state.exec === 'running' && p.core_id !== exclude)
        .map((p) => p.id),
    );
    if (ids.every((id) => running.has(id))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function median(url: string, rounds: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await (await fetch(url)).arrayBuffer();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

const dir = mkdtempSync(join(tmpdir(), 'streamcore-bench-cluster-'));
const etcd = await EtcdMembers.start(join(dir, 'etcd'));
const nodes: ClusterNode[] = [];
try {
  for (const id of ['a', 'b', 'c']) nodes.push(await startNode(dir, id, etcd.endpoints, TTL));
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const ids = Array.from({ length: COUNT }, (_, index) => `bench${index}`);

  const burstStart = performance.now();
  for (let start = 0; start < ids.length; start += 8) {
    await Promise.all(
      ids.slice(start, start + 8).map((id, index) =>
        fetch(`${(nodes[index % 3] as ClusterNode).url}/api/v3/process`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: body(id),
        }).then((response) => response.arrayBuffer()),
      ),
    );
  }
  await allRunning(nodes[0] as ClusterNode, ids);
  const burstMs = performance.now() - burstStart;

  const placed = await list(nodes[0] as ClusterNode);
  const perNode = new Map<string, number>();
  for (const p of placed) perNode.set(p.core_id, (perNode.get(p.core_id) ?? 0) + 1);
  const sample = placed[0] as Listed;
  const owner = nodes.find((node) => node.id === sample.core_id) as ClusterNode;
  const other = nodes.find((node) => node.id !== sample.core_id) as ClusterNode;
  const local = await median(`${owner.url}/api/v3/process/${sample.id}/state`, 200);
  const forwarded = await median(`${other.url}/api/v3/process/${sample.id}/state`, 200);

  const [victimId] = [...perNode].sort((a, b) => b[1] - a[1])[0] as [string, number];
  const victim = nodes.find((node) => node.id === victimId) as ClusterNode;
  const witness = nodes.find((node) => node.id !== victimId) as ClusterNode;
  const failStart = performance.now();
  victim.run.child.kill('SIGKILL');
  await victim.run.exited;
  await allRunning(witness, ids, victimId);
  const failoverMs = performance.now() - failStart;
  nodes.splice(nodes.indexOf(victim), 1);

  console.log(`processes: ${COUNT}, placed ${JSON.stringify(Object.fromEntries(perNode))}`);
  console.log(`burst of creates until all run: ${(burstMs / 1000).toFixed(1)} s`);
  console.log(
    `GET state median: local ${local.toFixed(2)} ms, forwarded ${forwarded.toFixed(2)} ms (x${(forwarded / local).toFixed(1)})`,
  );
  console.log(
    `failover of ${perNode.get(victimId)} processes after kill -9 (lease ${TTL} s): ${(failoverMs / 1000).toFixed(1)} s`,
  );
} finally {
  for (const node of nodes) {
    node.run.child.kill('SIGTERM');
    await node.run.exited;
  }
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
}
