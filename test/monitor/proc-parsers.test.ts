import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  cpuPercentages,
  parseCfsQuota,
  parseCgroupPath,
  parseCgroupV1Membership,
  parseCpuacct,
  parseCpuMax,
  parseCpuStat,
  parseMeminfo,
  parseMemoryCurrent,
  parseMemoryMax,
  parseNetDev,
  parseProcStat,
} from '../../src/monitor/collectors/parse/index.js';

const PROC = join(import.meta.dirname, '..', 'fixtures', 'proc');
const fixture = (...path: string[]): string => readFileSync(join(PROC, ...path), 'utf8');

function assertClose(actual: number, expected: number, message?: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-9, `${message ?? ''} ${actual} ≠ ${expected}`);
}

describe('/proc/stat', () => {
  it('reads the aggregate cpu line and counts logical CPUs', () => {
    const stat = parseProcStat(fixture('host', 'stat'));
    assert.equal(stat.cpuCount, 4);
    assert.deepEqual(stat.total, {
      user: 1000,
      nice: 200,
      system: 500,
      idle: 8000,
      iowait: 100,
      irq: 20,
      softirq: 30,
      steal: 50,
      guest: 40,
      guestNice: 10,
    });
  });

  it('accepts an old kernel line with fewer columns', () => {
    const stat = parseProcStat('cpu  1 2 3 4\ncpu0 1 2 3 4\n');
    assert.equal(stat.cpuCount, 1);
    assert.equal(stat.total.idle, 4);
    assert.equal(stat.total.steal, 0);
  });

  it('throws without an aggregate cpu line', () => {
    assert.throws(() => parseProcStat('intr 1 2 3\n'), /no aggregate "cpu" line/);
  });

  it('computes percentages over an interval, guest time counted once, as other', () => {
    const before = parseProcStat(fixture('host', 'stat')).total;
    const after = parseProcStat(fixture('host', 'stat.later')).total;
    const percent = cpuPercentages(after, before);
    // Δ: user 600 (guest 60 inside), nice 60 (guest_nice 10 inside), system 300, idle 1000,
    // iowait 40, irq 10, softirq 20, steal 70; total ticks 2100.
    assertClose(percent.user, (540 / 2100) * 100, 'user');
    assertClose(percent.system, (300 / 2100) * 100, 'system');
    assertClose(percent.idle, (1000 / 2100) * 100, 'idle');
    assertClose(percent.other, (260 / 2100) * 100, 'other');
    assertClose(percent.user + percent.system + percent.idle + percent.other, 100, 'sum');
  });

  it('computes since-boot percentages without an earlier reading, and idle for an empty interval', () => {
    const times = parseProcStat(fixture('host', 'stat')).total;
    const percent = cpuPercentages(times, undefined);
    assertClose(percent.user, (960 / 9900) * 100);
    assertClose(percent.other, (440 / 9900) * 100);
    assert.deepEqual(cpuPercentages(times, times), { user: 0, system: 0, idle: 100, other: 0 });
  });
});

describe('/proc/meminfo', () => {
  it('reads MemTotal and MemAvailable in bytes', () => {
    assert.deepEqual(parseMeminfo(fixture('host', 'meminfo')), {
      totalBytes: 8_048_576 * 1024,
      availableBytes: 4_024_288 * 1024,
    });
  });

  it('approximates MemAvailable on kernels without it', () => {
    const text = 'MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 20 kB\nCached: 300 kB\n';
    assert.deepEqual(parseMeminfo(text), { totalBytes: 1000 * 1024, availableBytes: 420 * 1024 });
  });

  it('throws without MemTotal', () => {
    assert.throws(() => parseMeminfo('MemFree: 1 kB\n'), /MemTotal/);
  });
});

describe('/proc/net/dev', () => {
  it('reads rx and tx bytes of every interface, loopback included', () => {
    assert.deepEqual(parseNetDev(fixture('host', 'net', 'dev')), [
      { name: 'lo', rxBytes: 1_048_576, txBytes: 1_048_576 },
      { name: 'eth0', rxBytes: 987_654_321, txBytes: 123_456_789 },
      { name: 'eth1', rxBytes: 0, txBytes: 0 },
      { name: 'docker0', rxBytes: 5_555_555, txBytes: 6_666_666 },
      { name: 'wlan0', rxBytes: 42, txBytes: 17 },
    ]);
  });

  it('skips lines that do not fit', () => {
    assert.deepEqual(parseNetDev('garbage\n  x: 1 2\n'), []);
  });
});

describe('cgroup v2 files', () => {
  it('finds the unified-hierarchy path in /proc/self/cgroup', () => {
    assert.equal(parseCgroupPath(fixture('host', 'self', 'cgroup.limited')), '/app.slice/server.service');
    assert.equal(parseCgroupPath('0::/\n'), '/');
    assert.equal(parseCgroupPath('4:memory:/x\n1:cpu:/\n'), undefined, 'cgroup v1 only');
  });

  it('reads cpu.max as CPUs, unlimited as undefined', () => {
    assert.equal(parseCpuMax(fixture('cgroup-limited', 'app.slice', 'cpu.max')), 1.5);
    assert.equal(parseCpuMax('max 100000\n'), undefined);
    assert.equal(parseCpuMax('50000 100000\n'), 0.5);
    assert.throws(() => parseCpuMax('abc 100000'), /cpu.max/);
  });

  it('reads cpu.stat', () => {
    assert.deepEqual(parseCpuStat(fixture('cgroup-limited', 'app.slice', 'cpu.stat')), {
      usageUsec: 20_000_000,
      userUsec: 12_000_000,
      systemUsec: 6_000_000,
    });
    assert.throws(() => parseCpuStat('nr_periods 1\n'), /usage_usec/);
  });

  it('reads memory.max and memory.current', () => {
    assert.equal(parseMemoryMax(fixture('cgroup-limited', 'app.slice', 'memory.max')), 2_147_483_648);
    assert.equal(parseMemoryMax('max\n'), undefined);
    assert.equal(parseMemoryCurrent(fixture('cgroup-limited', 'app.slice', 'memory.current')), 536_870_912);
    assert.throws(() => parseMemoryCurrent('-1'), /memory.current/);
  });
});

describe('cgroup v1 files', () => {
  it('finds the hierarchy that holds a controller in /proc/self/cgroup', () => {
    const text = fixture('host', 'self', 'cgroup.v1');
    assert.deepEqual(parseCgroupV1Membership(text, 'memory'), {
      controllers: ['memory'],
      path: '/docker/abc',
    });
    assert.deepEqual(parseCgroupV1Membership(text, 'cpuacct'), {
      controllers: ['cpu', 'cpuacct'],
      path: '/docker/abc',
    });
    assert.equal(parseCgroupV1Membership(text, 'pids'), undefined);
    assert.equal(parseCgroupV1Membership('0::/app.slice\n', 'memory'), undefined, 'cgroup v2 only');
  });

  it('reads the cfs quota and period as CPUs, -1 as unlimited', () => {
    assert.equal(parseCfsQuota('150000\n', '100000\n'), 1.5);
    assert.equal(parseCfsQuota('-1\n', '100000\n'), undefined);
    assert.throws(() => parseCfsQuota('abc', '100000'), /cfs_quota_us/);
    assert.throws(() => parseCfsQuota('50000', '0'), /cfs_quota_us/);
  });

  it('reads cpuacct.usage (ns) and cpuacct.stat (clock ticks) as µs', () => {
    assert.deepEqual(parseCpuacct('10000000000\n', 'user 700\nsystem 250\n'), {
      usageUsec: 10_000_000,
      userUsec: 7_000_000,
      systemUsec: 2_500_000,
    });
    assert.throws(() => parseCpuacct('-5', 'user 1\n'), /cpuacct.usage/);
  });

  it('names the v1 memory files in errors', () => {
    assert.equal(parseMemoryMax('9223372036854771712\n', 'memory.limit_in_bytes'), 9223372036854771712);
    assert.throws(() => parseMemoryMax('-1', 'memory.limit_in_bytes'), /memory\.limit_in_bytes/);
    assert.throws(() => parseMemoryCurrent('x', 'memory.usage_in_bytes'), /memory\.usage_in_bytes/);
  });
});
