import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Collector } from '../../src/monitor/collectors/collector.js';
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

/** The CPU collector over a proc tree and a cgroup root, on a monotonic clock the test moves. */
function cpuCollector(procRoot: string, cgroupRoot: string, monotonicNow: () => number): Collector {
  return createCpuCollector({
    procRoot,
    cgroup: new CgroupReader(procRoot, cgroupRoot),
    monotonicNow,
    firstSampleDelayMs: 0,
  });
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
    const collector = cpuCollector(proc, join(FIXTURES, 'cgroup-unlimited'), () => 0);
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
    const collector = cpuCollector(cgroupProc, cgroup, () => clockMs);
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

  describe('inside cgroup v1 hierarchies', () => {
    /** A proc tree whose process sits in /docker/abc of the v1 memory and cpu,cpuacct hierarchies. */
    let v1Proc: string;
    let v1Root: string;
    before(async () => {
      v1Proc = join(dir, 'proc-v1');
      v1Root = join(dir, 'cgroup-v1');
      await cp(proc, v1Proc, { recursive: true });
      await cp(join(FIXTURES, 'host', 'self', 'cgroup.v1'), join(v1Proc, 'self', 'cgroup'));
      await cp(join(FIXTURES, 'cgroup-v1'), v1Root, { recursive: true });
    });

    it('memory: memory.limit_in_bytes and limit − memory.usage_in_bytes; the "no limit" value is ignored', async () => {
      const samples = await collect(
        createMemoryCollector({ procRoot: v1Proc, cgroup: new CgroupReader(v1Proc, v1Root) }),
      );
      assert.equal(samples.get('mem_total'), 1_073_741_824);
      assert.equal(samples.get('mem_free'), 1_073_741_824 - 268_435_456);
      // Docker without --memory writes the v1 "unlimited" value (about 2^63) into the cgroup too.
      const unlimitedRoot = join(dir, 'cgroup-v1-unlimited');
      await cp(v1Root, unlimitedRoot, { recursive: true });
      await writeFile(
        join(unlimitedRoot, 'memory', 'docker', 'abc', 'memory.limit_in_bytes'),
        '9223372036854771712\n',
      );
      const host = await collect(
        createMemoryCollector({ procRoot: v1Proc, cgroup: new CgroupReader(v1Proc, unlimitedRoot) }),
      );
      assert.equal(host.get('mem_total'), 8_048_576 * 1024);
      assert.equal(host.get('mem_free'), 4_024_288 * 1024);
    });

    /** Runs the CPU collector twice, one second apart, with `cpuacctDir` advanced by 0.3 CPU-seconds. */
    async function cpuAfterOneSecond(
      procRoot: string,
      root: string,
      cpuacctDir: string,
    ): Promise<Map<string, number>> {
      let clockMs = 1000;
      const collector = cpuCollector(procRoot, root, () => clockMs);
      const first = await collect(collector);
      assert.equal(first.get('cpu_ncpu'), 0.5, 'cfs quota / period of /docker/abc');
      assert.equal(first.get('cpu_idle'), 100);
      // 0.3 CPU-seconds: 0.2 user (20 ticks), 0.05 system (5 ticks), 0.05 other, of 0.5 CPU.
      await writeFile(join(cpuacctDir, 'cpuacct.usage'), '10300000000\n');
      await writeFile(join(cpuacctDir, 'cpuacct.stat'), 'user 720\nsystem 255\n');
      clockMs += 1000;
      return collect(collector);
    }

    it('cpu: the cfs quota is ncpu, and use is cpuacct time relative to it', async () => {
      const root = join(dir, 'cgroup-v1-cpu');
      await cp(v1Root, root, { recursive: true });
      const second = await cpuAfterOneSecond(v1Proc, root, join(root, 'cpu,cpuacct', 'docker', 'abc'));
      assertClose(second.get('cpu_user'), 40, 'user');
      assertClose(second.get('cpu_system'), 10, 'system');
      assertClose(second.get('cpu_other'), 10, 'other');
      assertClose(second.get('cpu_idle'), 40, 'idle');
    });

    it('cpu: also with cpu and cpuacct mounted as two hierarchies', async () => {
      const proc2 = join(dir, 'proc-v1-split');
      await cp(v1Proc, proc2, { recursive: true });
      await writeFile(join(proc2, 'self', 'cgroup'), '3:cpuacct:/docker/abc\n2:cpu:/docker/abc\n0::/\n');
      const root = join(dir, 'cgroup-v1-split');
      await cp(join(v1Root, 'cpu,cpuacct'), join(root, 'cpu'), { recursive: true });
      await cp(join(v1Root, 'cpu,cpuacct'), join(root, 'cpuacct'), { recursive: true });
      // Only the cpuacct copy counts time; the cpu copy's usage files must not be read.
      await writeFile(join(root, 'cpu', 'docker', 'abc', 'cpuacct.usage'), '0\n');
      const second = await cpuAfterOneSecond(proc2, root, join(root, 'cpuacct', 'docker', 'abc'));
      assertClose(second.get('cpu_user'), 40, 'user');
      assertClose(second.get('cpu_idle'), 40, 'idle');
    });
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
