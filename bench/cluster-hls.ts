/**
 * HLS from any node (issue 27, docs/cluster.md#media-from-any-node): viewers that ask a node
 * which does not write the stream, answered by a redirect (`cluster.media=redirect`, a 307 to the
 * writer) or by a proxy (`cluster.media=proxy`, the asked node fetches from the writer and passes
 * the answer on), against viewers that ask the writer itself.
 *
 * Method: one etcd member and three streamcore nodes as child processes on loopback: `w` writes
 * one HLS stream into its memfs (testsrc 320x180, 25 fps, mpeg2video at 1 Mbit/s, 1 s segments,
 * 6 listed), `r` runs with `cluster.media=redirect`, `p` with `proxy`. VIEWERS simulated players
 * per phase (fetch, keep-alive; like hls.js they reload the playlist from the URL they were given
 * about every segment, follow redirects, and read each new segment relative to the playlist's
 * final URL). Phases of PHASE_SEC after a warm-up, in the order direct, redirect, proxy, repeated
 * ROUNDS times so that a busy moment of the shared machine falls on all three alike. Figures per
 * mode: median and p95 of the time a viewer waits for a playlist and for a segment (what a
 * player's buffer sees), errors, and the CPU of each node (utime+stime from /proc over the
 * phase, percent of one core).
 *
 * Run: node --import tsx bench/cluster-hls.ts   (VIEWERS=20 PHASE_SEC=15 ROUNDS=2: about 2.5 minutes)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startNode, type ClusterNode } from '../test/cluster/cluster-nodes.js';
import { EtcdMembers } from '../test/cluster/etcd-members.js';
import { CLOCK_TICKS_PER_SEC, cpuTicksOfPid } from './measure.js';

const VIEWERS = Number(process.env.VIEWERS ?? 20);
const PHASE_SEC = Number(process.env.PHASE_SEC ?? 15);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const MODES = ['direct', 'redirect', 'proxy'] as const;
type Mode = (typeof MODES)[number];

interface Samples {
  playlistMs: number[];
  segmentMs: number[];
  errors: number;
  cpu: Record<string, number[]>;
}

const hlsProcess = {
  id: 'live',
  input: [{ id: 'in', address: 'testsrc=size=320x180:rate=25', options: ['-re', '-f', 'lavfi'] }],
  output: [
    {
      id: 'out',
      address: '{memfs}/live.m3u8',
      options: ['-c:v', 'mpeg2video', '-b:v', '1M', '-g', '25', '-f', 'hls', '-hls_time', '1'].concat([
        '-hls_list_size',
        '6',
        '-hls_flags',
        'delete_segments',
      ]),
    },
  ],
  autostart: true,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One player: playlist about every second, each new segment once, until `stopAt`. */
async function view(url: string, stopAt: number, samples: Samples): Promise<void> {
  const seen = new Set<string>();
  let first = true;
  while (performance.now() < stopAt) {
    const started = performance.now();
    try {
      const playlist = await fetch(url);
      const text = await playlist.text();
      samples.playlistMs.push(performance.now() - started);
      if (playlist.status !== 200) throw new Error(`playlist ${playlist.status}`);
      const segments = text.split('\n').filter((line) => line.endsWith('.ts'));
      // Joining: the live edge only, as a player starts a few segments behind and catches up.
      const fresh = (first ? segments.slice(-1) : segments).filter((name) => !seen.has(name));
      first = false;
      for (const name of fresh) {
        seen.add(name);
        const segmentStart = performance.now();
        const segment = await fetch(new URL(name, playlist.url));
        await segment.arrayBuffer();
        if (segment.status !== 200) throw new Error(`segment ${segment.status}`);
        samples.segmentMs.push(performance.now() - segmentStart);
      }
    } catch {
      samples.errors++;
    }
    await sleep(Math.max(0, 1000 - (performance.now() - started)));
  }
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? NaN;
};

const dir = mkdtempSync(join(tmpdir(), 'streamcore-bench-cluster-hls-'));
const etcd = await EtcdMembers.start(join(dir, 'etcd'), 1);
const nodes: ClusterNode[] = [];
try {
  // The writer joins alone, so that the stream is placed on it.
  const writer = await startNode(dir, 'w', etcd.endpoints, 8);
  nodes.push(writer);
  await sleep(2000);
  const created = await fetch(`${writer.url}/api/v3/process`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(hlsProcess),
  });
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`);
  const redirecting = await startNode(dir, 'r', etcd.endpoints, 8, { CORE_CLUSTER_MEDIA: 'redirect' });
  const proxying = await startNode(dir, 'p', etcd.endpoints, 8, { CORE_CLUSTER_MEDIA: 'proxy' });
  nodes.push(redirecting, proxying);
  const asked: Record<Mode, ClusterNode> = { direct: writer, redirect: redirecting, proxy: proxying };
  // Every node knows the others and the playlist has segments to read.
  for (;;) {
    const answers = await Promise.all(
      [redirecting, proxying].map((node) => fetch(`${node.url}/memfs/live.m3u8`).then((r) => r.text())),
    );
    if (answers.every((text) => text.includes('.ts'))) break;
    await sleep(500);
  }
  await sleep(3000);

  const results = new Map<Mode, Samples>(
    MODES.map((mode) => [mode, { playlistMs: [], segmentMs: [], errors: 0, cpu: {} }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      const samples = results.get(mode)!;
      const before = nodes.map((node) => cpuTicksOfPid(node.pid));
      const startedAt = performance.now();
      const stopAt = startedAt + PHASE_SEC * 1000;
      await Promise.all(
        Array.from({ length: VIEWERS }, async (_, index) => {
          // Joining over the first second, as viewers do not all arrive at once.
          await sleep((index * 1000) / VIEWERS);
          await view(`${asked[mode].url}/memfs/live.m3u8`, stopAt, samples);
        }),
      );
      const seconds = (performance.now() - startedAt) / 1000;
      nodes.forEach((node, index) => {
        const percent = ((cpuTicksOfPid(node.pid) - before[index]!) / CLOCK_TICKS_PER_SEC / seconds) * 100;
        (samples.cpu[node.id] ??= []).push(percent);
      });
    }
  }

  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  console.log(`${VIEWERS} viewers per phase, ${ROUNDS} rounds of ${PHASE_SEC} s per mode (shared machine)`);
  console.log(
    '| mode | playlist median | playlist p95 | segment median | segment p95 | errors | CPU w (writer) | CPU r | CPU p |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [mode, samples] of results) {
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    const cpu = ['w', 'r', 'p'].map((id) => `${mean(samples.cpu[id] ?? []).toFixed(1)} %`);
    console.log(
      `| ${mode} (asked: ${asked[mode].id}) | ${ms(quantile(samples.playlistMs, 0.5))} | ${ms(quantile(samples.playlistMs, 0.95))} | ` +
        `${ms(quantile(samples.segmentMs, 0.5))} | ${ms(quantile(samples.segmentMs, 0.95))} | ${samples.errors} | ${cpu.join(' | ')} |`,
    );
  }
} finally {
  for (const node of nodes) {
    node.run.child.kill('SIGTERM');
    await node.run.exited;
  }
  await etcd.stop();
  rmSync(dir, { recursive: true, force: true });
}
