/**
 * The cluster's figures (issue 27), on a real etcd and three streamcore nodes as child processes,
 * all on this machine:
 *   - burst:    time from one burst of COUNT creates (spread over the three nodes, 8 at a time)
 *               until every process runs;
 *   - latency:  median of 200 `GET /api/v3/process/:id/state` and of 50 `GET /api/v3/process`
 *               (the list, gathered from every node) asked of a single node (a server without
 *               cluster running the same COUNT processes), of the node that runs the process, and
 *               of a node that is neither that node nor the leader (forwarded); the three asked in
 *               turn, after a warm-up;
 *   - failover: time from `kill -9` of the node with the most processes until all run again.
 * `failover N,N,…` instead measures the failover alone for each N: a fresh cluster whose two other
 * nodes are drained while N processes are created (so all N land on node a), undrained, then
 * node a is killed.
 * Every encoder is a cheap `-re` lavfi source (32x24 at 2 fps) into the null muxer. The machine is
 * shared: read the figures as orders of magnitude and the latency as ratios.
 *
 * Run: node --import tsx bench/cluster.ts [COUNT=30]
 *      node --import tsx bench/cluster.ts burst 300   (the burst alone)
 *      node --import tsx bench/cluster.ts failover 10,50,150
 * With BENCH_CLUSTER_LOGS=<dir>, each node's log (pino JSON lines, with their times) is written to
 * <dir>/<run>-<node>.log when its cluster stops, and the moment of each `kill -9` is printed, so
 * that where a failover's time goes can be read from the nodes' own lines.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startMain } from '../test/helpers/main-process.js';
import { startNode, type ClusterNode } from '../test/cluster/cluster-nodes.js';
import { EtcdMembers } from '../test/cluster/etcd-members.js';

const TTL = 8;
const LOG_DIR = process.env.BENCH_CLUSTER_LOGS;
let runs = 0;

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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(url: string, method = 'GET', payload?: string): Promise<Response> {
  const response = await fetch(url, {
    method,
    headers: payload === undefined ? {} : { 'content-type': 'application/json' },
    body: payload,
  });
  await response.arrayBuffer();
  return response;
}

async function list(node: { url: string }): Promise<Listed[]> {
  const response = await fetch(`${node.url}/api/v3/process?filter=state`);
  return response.ok ? ((await response.json()) as Listed[]) : [];
}

async function allRunning(node: ClusterNode, ids: string[], exclude?: string): Promise<void> {
  for (;;) {
    const running = new Set(
      (await list(node).catch(() => []))
        .filter((p) => p.state.exec === 'running' && (exclude === undefined || p.core_id !== exclude))
        .map((p) => p.id),
    );
    if (ids.every((id) => running.has(id))) return;
    await sleep(100);
  }
}

/** One burst: COUNT creates, 8 at a time, through the nodes in turn. */
async function createAll(nodes: ClusterNode[], ids: string[]): Promise<void> {
  for (let start = 0; start < ids.length; start += 8) {
    await Promise.all(
      ids
        .slice(start, start + 8)
        .map((id, index) => call(`${nodes[index % nodes.length]!.url}/api/v3/process`, 'POST', body(id))),
    );
  }
}

/**
 * Median time of `rounds` requests to each of `urls`, taken in turn (one round asks each once, so
 * a busy moment of the shared machine falls on all alike), after a quarter as many unmeasured.
 */
async function medians(urls: string[], rounds: number): Promise<number[]> {
  for (let i = 0; i < rounds / 4; i++) for (const url of urls) await (await fetch(url)).arrayBuffer();
  const times = urls.map((): number[] => []);
  for (let i = 0; i < rounds; i++) {
    for (const [index, url] of urls.entries()) {
      const start = performance.now();
      await (await fetch(url)).arrayBuffer();
      times[index]!.push(performance.now() - start);
    }
  }
  return times.map((each) => each.sort((a, b) => a - b)[Math.floor(each.length / 2)]!);
}

/** etcd and three nodes that know each other; `work` gets them, everything is stopped after. */
async function withCluster(work: (nodes: ClusterNode[], dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-bench-cluster-'));
  const etcd = await EtcdMembers.start(join(dir, 'etcd'));
  const nodes: ClusterNode[] = [];
  const run = ++runs;
  try {
    for (const id of ['a', 'b', 'c']) nodes.push(await startNode(dir, id, etcd.endpoints, TTL));
    for (;;) {
      const about = (await (await fetch(`${nodes[0]!.url}/api/v3/cluster`)).json()) as {
        nodes?: unknown[];
        leader?: { id: string };
      };
      if (about.nodes?.length === 3 && about.leader?.id) break;
      await sleep(200);
    }
    await work(nodes, dir);
  } finally {
    for (const node of nodes) {
      if (node.run.child.exitCode !== null || node.run.child.signalCode !== null) continue;
      node.run.child.kill('SIGTERM');
      await node.run.exited;
    }
    if (LOG_DIR !== undefined) {
      mkdirSync(LOG_DIR, { recursive: true });
      for (const node of nodes)
        writeFileSync(join(LOG_DIR, `${run}-${node.id}.log`), (await node.run.exited).stdout);
    }
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Kills `victim` (SIGKILL) and times, in ms, until every one of `ids` is listed by another node
 * (adopted there: the lease expired and the leader moved it) and until every one runs there.
 */
async function failover(
  nodes: ClusterNode[],
  victim: ClusterNode,
  ids: string[],
): Promise<{ adoptedMs: number; runningMs: number }> {
  const witness = nodes.find((node) => node !== victim)!;
  const startedAt = performance.now();
  if (LOG_DIR !== undefined) console.log(`kill -9 of node ${victim.id} at ${new Date().toISOString()}`);
  victim.run.child.kill('SIGKILL');
  await victim.run.exited;
  let adoptedMs: number | undefined;
  for (;;) {
    const elsewhere = new Map(
      (await list(witness).catch(() => [])).filter((p) => p.core_id !== victim.id).map((p) => [p.id, p]),
    );
    if (adoptedMs === undefined && ids.every((id) => elsewhere.has(id)))
      adoptedMs = performance.now() - startedAt;
    if (ids.every((id) => elsewhere.get(id)?.state.exec === 'running'))
      return { adoptedMs: adoptedMs ?? NaN, runningMs: performance.now() - startedAt };
    await sleep(100);
  }
}

/** A server without cluster running `ids`: the latency baseline. */
async function startSingleNode(dir: string, ids: string[]) {
  const home = join(dir, 'single');
  const run = startMain(
    {
      CORE_API_AUTH_ENABLE: 'false',
      CORE_ADDRESS: '127.0.0.1:0',
      CORE_DB_DIR: join(home, 'db'),
      CORE_STORAGE_DISK_DIR: join(home, 'data'),
      CORE_SESSIONS_ENABLE: 'false',
    },
    dir,
  );
  const url = await run.listening;
  for (const id of ids) await call(`${url}/api/v3/process`, 'POST', body(id));
  await allRunning({ id: 'single', url } as ClusterNode, ids);
  return {
    url,
    stop: async () => {
      run.child.kill('SIGTERM');
      await run.exited;
    },
  };
}

async function burstLatencyFailover(count: number, burstOnly: boolean): Promise<void> {
  await withCluster(async (nodes, dir) => {
    const ids = Array.from({ length: count }, (_, index) => `bench${index}`);
    const burstStart = performance.now();
    await createAll(nodes, ids);
    await allRunning(nodes[0]!, ids);
    const burstMs = performance.now() - burstStart;
    console.log(`burst of ${count} creates until all run: ${(burstMs / 1000).toFixed(1)} s`);
    if (burstOnly) return;

    const placed = await list(nodes[0]!);
    const perNode = new Map<string, number>();
    for (const p of placed) perNode.set(p.core_id, (perNode.get(p.core_id) ?? 0) + 1);
    const leader = (
      (await (await fetch(`${nodes[0]!.url}/api/v3/cluster`)).json()) as { leader: { id: string } }
    ).leader.id;
    // A process that the leader does not run, asked of the third node.
    const sample = placed.find((p) => p.core_id !== leader)!;
    const owner = nodes.find((node) => node.id === sample.core_id)!;
    const other = nodes.find((node) => node.id !== sample.core_id && node.id !== leader)!;
    const single = await startSingleNode(dir, ids);
    const state = (url: string, id: string) => `${url}/api/v3/process/${id}/state`;
    const [singleState, local, forwarded] = await medians(
      [state(single.url, sample.id), state(owner.url, sample.id), state(other.url, sample.id)],
      200,
    );
    const [singleList, listLocal, listOther] = await medians(
      [single.url, owner.url, other.url].map((url) => `${url}/api/v3/process`),
      50,
    );
    await single.stop();

    const [victimId, victimCount] = [...perNode].sort((a, b) => b[1] - a[1])[0]!;
    const moved = await failover(
      nodes,
      nodes.find((node) => node.id === victimId)!,
      ids,
    );

    const ms = (value: number) => `${value.toFixed(2)} ms`;
    console.log(`processes: ${count}, placed ${JSON.stringify(Object.fromEntries(perNode))}`);
    console.log(
      `| request | single node | cluster, the node that runs it | cluster, another node (not the leader) |`,
    );
    console.log('| --- | ---: | ---: | ---: |');
    console.log(`| GET /process/:id/state | ${ms(singleState!)} | ${ms(local!)} | ${ms(forwarded!)} |`);
    console.log(
      `| GET /process (${count} in the cluster) | ${ms(singleList!)} | ${ms(listLocal!)} | ${ms(listOther!)} |`,
    );
    console.log(
      `failover of ${victimCount} processes after kill -9 (lease ${TTL} s): all adopted ${(moved.adoptedMs / 1000).toFixed(1)} s, all running ${(moved.runningMs / 1000).toFixed(1)} s`,
    );
  });
}

async function setState(node: ClusterNode, id: string, state: 'online' | 'maintenance'): Promise<void> {
  const response = await call(
    `${node.url}/api/v3/cluster/node/${id}/state`,
    'PUT',
    JSON.stringify({ state }),
  );
  if (response.status !== 200) throw new Error(`node ${id} ${state}: ${response.status}`);
}

async function failoverPerCount(counts: number[]): Promise<void> {
  console.log(
    `| processes on the killed node | until all are adopted elsewhere | until all run elsewhere (lease ${TTL} s) |`,
  );
  console.log('| ---: | ---: | ---: |');
  for (const count of counts) {
    await withCluster(async (nodes) => {
      const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
      await setState(a, 'b', 'maintenance');
      await setState(a, 'c', 'maintenance');
      const ids = Array.from({ length: count }, (_, index) => `f${index}`);
      await createAll([a, b, c], ids);
      await allRunning(a, ids);
      await setState(a, 'b', 'online');
      await setState(a, 'c', 'online');
      // Every node has read the undrain (they read etcd every 0.5 s).
      await sleep(1500);
      const { adoptedMs, runningMs } = await failover(nodes, a, ids);
      console.log(`| ${count} | ${(adoptedMs / 1000).toFixed(1)} s | ${(runningMs / 1000).toFixed(1)} s |`);
    });
  }
}

if (process.argv[2] === 'failover')
  await failoverPerCount((process.argv[3] ?? '10,50,150').split(',').map(Number));
else if (process.argv[2] === 'burst') await burstLatencyFailover(Number(process.argv[3] ?? 300), true);
else await burstLatencyFailover(Number(process.argv[2] ?? 30), false);
