import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Collector } from '../../src/monitor/collector.js';
import {
  CgroupReader,
  createCpuCollector,
  createDiskCollector,
  createMemoryCollector,
  createNetworkCollector,
  createUptimeCollector,
} from '../../src/monitor/collectors/index.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'proc');

/** Runs a collector once with a real emit and returns `metric{labels}` → value. */
async function collect(collector: Collector): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  await collector.collect((metric, labels, value) => {
    samples.set(labels.length === 0 ? metric : `${metric}{${labels.join(',')}}`, value);
  });
  return samples;
}

function assertClose(actual: number | undefined, expected: number, message: string): void {
  assert.ok(
    actual !== undefined && Math.abs(actual - expected) < 1e-9,
    `${message}: ${actual} ≠ ${expected}`,
  );
}

describe('host collectors', () => {
  let dir: string;
  /** A writable copy of the fixture trees: `proc/` and `cgroup/` (the limited hierarchy). */
  let proc: string;
  let cgroup: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-host-'));
    proc = join(dir, 'proc');
    cgroup = join(dir, 'cgroup');
    await cp(join(FIXTURES, 'host'), proc, { recursive: true });
    await cp(join(FIXTURES, 'cgroup-limited'), cgroup, { recursive: true });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('cpu: percentages from /proc/stat deltas and the number of logical CPUs', async () => {
    await cp(join(FIXTURES, 'host', 'stat'), join(proc, 'stat'));
    const collector = createCpuCollector({
      procRoot: proc,
      cgroup: new CgroupReader(proc, join(FIXTURES, 'cgroup-unlimited')),
      monotonicNow: () => 0,
      firstSampleDelayMs: 0,
    });
    const first = await collect(collector);
    assert.equal(first.get('cpu_ncpu'), 4);
    assert.equal(first.get('cpu_idle'), 100, 'nothing happened between the two first readings');
    await cp(join(FIXTURES, 'host', 'stat.later'), join(proc, 'stat'));
    const second = await collect(collector);
    assertClose(second.get('cpu_user'), (540 / 2100) * 100, 'user');
    assertClose(second.get('cpu_system'), (300 / 2100) * 100, 'system');
    assertClose(second.get('cpu_idle'), (1000 / 2100) * 100, 'idle');
    assertClose(second.get('cpu_other'), (260 / 2100) * 100, 'other');
  });

  it('cpu: inside a cgroup with a CPU limit, the limit is ncpu and use is relative to it', async () => {
    const cgroupProc = join(dir, 'proc-limited');
    await cp(proc, cgroupProc, { recursive: true });
    await cp(join(FIXTURES, 'host', 'self', 'cgroup.limited'), join(cgroupProc, 'self', 'cgroup'));
    let clockMs = 5000;
    const collector = createCpuCollector({
      procRoot: cgroupProc,
      cgroup: new CgroupReader(cgroupProc, cgroup),
      monotonicNow: () => clockMs,
      firstSampleDelayMs: 0,
    });
    const first = await collect(collector);
    assert.equal(first.get('cpu_ncpu'), 1.5, 'the tightest limit on the way up (app.slice)');
    assert.equal(first.get('cpu_idle'), 100);
    // One second later app.slice used 0.6 CPU-seconds: 0.4 user, 0.15 system, 0.05 other, of 1.5.
    await writeFile(
      join(cgroup, 'app.slice', 'cpu.stat'),
      'usage_usec 20600000\nuser_usec 12400000\nsystem_usec 6150000\n',
    );
    clockMs += 1000;
    const second = await collect(collector);
    assertClose(second.get('cpu_user'), (0.4 / 1.5) * 100, 'user');
    assertClose(second.get('cpu_system'), (0.15 / 1.5) * 100, 'system');
    assertClose(second.get('cpu_other'), (0.05 / 1.5) * 100, 'other');
    assertClose(second.get('cpu_idle'), 60, 'idle');
  });

  it('memory: MemTotal and MemAvailable on the host', async () => {
    const collector = createMemoryCollector({
      procRoot: proc,
      cgroup: new CgroupReader(proc, join(FIXTURES, 'cgroup-unlimited')),
    });
    const samples = await collect(collector);
    assert.equal(samples.get('mem_total'), 8_048_576 * 1024);
    assert.equal(samples.get('mem_free'), 4_024_288 * 1024);
  });

  it('memory: the cgroup limit and limit − usage when the limit is below the host memory', async () => {
    const cgroupProc = join(dir, 'proc-memory');
    await cp(proc, cgroupProc, { recursive: true });
    await cp(join(FIXTURES, 'host', 'self', 'cgroup.limited'), join(cgroupProc, 'self', 'cgroup'));
    const collector = createMemoryCollector({
      procRoot: cgroupProc,
      cgroup: new CgroupReader(cgroupProc, cgroup),
    });
    const samples = await collect(collector);
    assert.equal(samples.get('mem_total'), 2_147_483_648);
    assert.equal(samples.get('mem_free'), 2_147_483_648 - 536_870_912);
    // A limit above the host's memory does not count.
    await writeFile(join(cgroup, 'app.slice', 'memory.max'), '1099511627776\n');
    const unlimited = await collect(
      createMemoryCollector({ procRoot: cgroupProc, cgroup: new CgroupReader(cgroupProc, cgroup) }),
    );
    assert.equal(unlimited.get('mem_total'), 8_048_576 * 1024);
  });

  it('disk: size and used bytes of the file system of the directory, labelled with its absolute path', async () => {
    const samples = await collect(createDiskCollector({ dir }));
    const stats = await statfs(dir);
    assert.equal(samples.get(`disk_total{${dir}}`), stats.blocks * stats.bsize);
    const usage = samples.get(`disk_usage{${dir}}`)!;
    assert.ok(usage > 0 && usage <= stats.blocks * stats.bsize);
    await assert.rejects(collect(createDiskCollector({ dir: join(dir, 'missing') })), /ENOENT/);
  });

  it('network: rx and tx bytes per interface', async () => {
    const samples = await collect(createNetworkCollector({ procRoot: proc }));
    assert.equal(samples.get('net_rx{lo}'), 1_048_576);
    assert.equal(samples.get('net_tx{eth0}'), 123_456_789);
    assert.equal(samples.get('net_rx{wlan0}'), 42);
    assert.equal(samples.size, 10);
  });

  it('uptime: seconds since the start on the injected clock', async () => {
    let now = 1_000_000;
    const collector = createUptimeCollector({ now: () => now, startedAtMs: 1_000_000 });
    now += 2500;
    assert.equal((await collect(collector)).get('uptime_uptime'), 2.5);
  });
});
