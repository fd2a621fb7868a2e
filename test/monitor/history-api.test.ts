import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `POST /api/v3/metrics` past the raw window, over real HTTP (docs/history.md#queries-which-tier-answers-which-range): a real
 * server on a clock 15× faster than real time (a collection every real second is 15 s of server
 * time), a raw window of 5 snapshots, the history at its real steps of a minute and an hour. A
 * poller records every snapshot the server collects; the long ranges must answer the mean
 * (gauges) or the last value (counters) of those per minute and per hour, and the same after a
 * restart.
 */

const SPEED = 15;
/** Four minutes before a full hour, so the test sees an hour finish. */
const T0 = Date.UTC(2026, 0, 5, 9, 56, 0);
const HOUR = 3600;

interface Series {
  name: string;
  labels: Record<string, string>;
  values: [number, number][];
}
interface Answer {
  timerange_sec: number;
  interval_sec: number;
  metrics: Series[];
}

/** The two series the test follows: a counter and a gauge it changes itself. */
const ITEMS = [{ name: 'uptime_uptime' }, { name: 'filesystem_usage', labels: { name: '^memfs$' } }];
const UPTIME = 'uptime_uptime';
const MEMFS = 'filesystem_usage';

/**
 * The server's clock: stands at `startMs` until `go` (so a slow start-up on a loaded machine does
 * not eat the test's minutes), then runs `SPEED` times faster than real time.
 */
function fastClock(startMs: number): { now: () => number; go: () => void } {
  let realStart = Number.NaN;
  return {
    now: () => (Number.isNaN(realStart) ? startMs : startMs + (Date.now() - realStart) * SPEED),
    go: () => {
      realStart = Date.now();
    },
  };
}

async function query(server: TestServer, body: unknown): Promise<Answer> {
  const response = await fetch(`${server.url}/api/v3/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Answer;
}

function valuesOf(answer: Answer, name: string): [number, number][] {
  const series = answer.metrics.find((s) => s.name === name);
  assert.ok(series !== undefined, `${name} in ${JSON.stringify(answer).slice(0, 300)}`);
  return series.values;
}

/**
 * The snapshots the server collected, by time (seconds), as seen by polling latest values every
 * 100 ms (1.5 s of server time; snapshots are about 15 s apart, more when a tick is skipped). On a
 * loaded machine a poll may miss a snapshot, so a minute is only checked where what was seen
 * pins its value down: memfs usage only grows (the test only adds files), so a minute whose seen
 * snapshots, the last one before and the first one after it all show the same usage had that
 * usage throughout; uptime only grows, so the minute's end value lies between the last seen in
 * the minute and the first seen after it.
 */
class SnapshotRecorder {
  readonly byTime = new Map<number, { uptime?: number; memfs?: number }>();
  private running = true;
  private loop: Promise<void> | undefined;

  start(server: TestServer): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const answer = await query(server, { metrics: ITEMS });
        const uptime = answer.metrics.find((s) => s.name === UPTIME)?.values[0];
        const memfs = answer.metrics.find((s) => s.name === MEMFS)?.values[0];
        const time = uptime?.[0] ?? memfs?.[0];
        if (time !== undefined) this.byTime.set(time, { uptime: uptime?.[1], memfs: memfs?.[1] });
        await sleep(100);
      }
    })();
    // Kept for `stop`, which reports a failure; not an unhandled rejection meanwhile.
    this.loop.catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** The memfs usage of a minute when it was the same throughout (see above), else undefined. */
  constantMemfs(stepStart: number): number | undefined {
    const seen = [...this.byTime].filter(([, s]) => s.memfs !== undefined).sort(([a], [b]) => a - b);
    const inside = seen.filter(([t]) => t >= stepStart && t < stepStart + 60);
    const before = seen.filter(([t]) => t < stepStart).at(-1);
    const after = seen.find(([t]) => t >= stepStart + 60);
    if (inside.length === 0 || before === undefined || after === undefined) return undefined;
    const values = new Set([before, ...inside, after].map(([, s]) => s.memfs));
    return values.size === 1 ? before[1].memfs : undefined;
  }

  /** The bounds of uptime at the end of a minute: last seen in it, first seen after it. */
  uptimeBounds(stepStart: number): [number, number] | undefined {
    const seen = [...this.byTime].filter(([, s]) => s.uptime !== undefined).sort(([a], [b]) => a - b);
    const last = seen.filter(([t]) => t >= stepStart && t < stepStart + 60).at(-1);
    const after = seen.find(([t]) => t >= stepStart + 60);
    if (last === undefined || after === undefined) return undefined;
    return [last[1].uptime!, after[1].uptime!];
  }
}

/**
 * Checks the points older than `beforeSec` (the minute tier's) against what was collected;
 * returns the checked minutes' values (uptime, memfs) by minute.
 */
function checkMinutes(answer: Answer, recorder: SnapshotRecorder, beforeSec: number): Map<number, number[]> {
  const checked = new Map<number, number[]>();
  const uptime = new Map(valuesOf(answer, UPTIME));
  for (const [time, memfs] of valuesOf(answer, MEMFS)) {
    if (time >= beforeSec) continue;
    const step = time - (time % 60);
    const constant = recorder.constantMemfs(step);
    const bounds = recorder.uptimeBounds(step);
    if (constant === undefined || bounds === undefined) continue;
    assert.equal(memfs, constant, `memfs usage through minute ${step}`);
    const end = uptime.get(time)!;
    assert.ok(
      end >= bounds[0] && end <= bounds[1],
      `uptime ${end} at the end of minute ${step}: ${bounds.join(' … ')}`,
    );
    checked.set(step, [end, memfs]);
  }
  return checked;
}

async function putFile(server: TestServer, name: string, bytes: number): Promise<void> {
  const response = await fetch(`${server.url}/api/v3/fs/mem/${name}`, {
    method: 'PUT',
    body: Buffer.alloc(bytes, 7),
  });
  assert.ok(response.status === 201 || response.status === 204, String(response.status));
}

/** Waits until the server's clock is past `timeMs`. */
async function until(now: () => number, timeMs: number): Promise<void> {
  while (now() < timeMs) await sleep(100);
}

function config() {
  return {
    api: { auth: { enable: false } },
    metrics: {
      enable: true,
      interval_sec: 1,
      range_sec: 5,
      history: { enable: true },
      // The first long query of a cold process on a loaded machine may take over the default 500 ms.
      query: { max_time_ms: 10_000 },
    },
  };
}

/** The first server: collects from 9:56 to past 10:03 (server time), checks its long ranges. */
async function firstRun(dir: string, recorder: SnapshotRecorder) {
  const clock = fastClock(T0);
  const now = clock.now;
  const server = await startServer({ dir, now, config: config() });
  clock.go();
  try {
    recorder.start(server);
    // memfs usage changes while minutes pass, so the means differ from minute to minute.
    // memfs usage steps up at 9:56:05, 9:58:30 and 10:01:15 (server time): the minutes between
    // differ, and 9:57 and 9:59 hold one usage throughout.
    const at = (minute: number, second: number) => Date.UTC(2026, 0, 5, 9, minute, second);
    for (const [i, [minute, second, size]] of [
      [56, 5, 1000],
      [58, 30, 1500],
      [61, 15, 4000],
    ].entries()) {
      await until(now, at(minute!, second!));
      await putFile(server, `f${i}.bin`, size!);
    }
    // Past 10:01 the hour from 9:00 is finished and written; by 10:05 the raw window (5
    // snapshots) holds none of its minutes.
    await until(now, at(65, 0));
    await recorder.stop();

    const minutes = await query(server, { timerange_sec: HOUR, interval_sec: 60, metrics: ITEMS });
    assert.deepEqual(
      [minutes.timerange_sec, minutes.interval_sec],
      [HOUR, 60],
      'the head echoes the range and step used',
    );
    const memfsPoints = valuesOf(minutes, MEMFS);
    const end = memfsPoints.at(-1)![0];
    // Points before the raw window (5 snapshots, about 150 s of server time) are the minute tier's.
    const checkedBefore = checkMinutes(minutes, recorder, end - 300);
    assert.ok(
      checkedBefore.has(NINE + 57 * 60) || checkedBefore.has(NINE + 59 * 60),
      'a constant minute checked',
    );
    assert.ok(
      checkedBefore.size >= 1,
      `only ${checkedBefore.size} minutes checked: ${JSON.stringify(minutes)} ${JSON.stringify([...recorder.byTime])}`,
    );
    assert.ok(new Set(memfsPoints.map(([, v]) => v)).size >= 3, 'the minutes differ');

    // Without interval_sec past the raw window: the tier's step.
    const defaultStep = await query(server, { timerange_sec: HOUR, metrics: ITEMS });
    const steps = valuesOf(defaultStep, UPTIME).map(([t]) => t);
    assert.ok(steps.length >= 5);
    for (let i = 1; i < steps.length; i++) assert.equal(steps[i]! - steps[i - 1]!, 60);

    // 30 days: the hour tier. Its point in 9:xx is the hour from 9:00: the mean of that hour's
    // minute means (9:56 … 9:59, as the minute tier answered them), the counter at its end.
    const minuteOf = (name: string, m: number) =>
      valuesOf(minutes, name).find(([t]) => t >= NINE + m * 60 && t < NINE + (m + 1) * 60)?.[1];
    const nineMemfs = [56, 57, 58, 59].map((m) => minuteOf(MEMFS, m));
    assert.ok(
      nineMemfs.every((v) => v !== undefined),
      JSON.stringify(nineMemfs),
    );
    const hours = await query(server, { timerange_sec: 30 * 86_400, interval_sec: HOUR, metrics: ITEMS });
    const hourPoint = valuesOf(hours, MEMFS).find(([t]) => t >= NINE && t < NINE + HOUR);
    assert.ok(hourPoint !== undefined, JSON.stringify(hours));
    // The minute points are rounded to 3 decimals in the answer, the hour's mean is taken before.
    const mean = nineMemfs.reduce<number>((sum, v) => sum + v, 0) / 4;
    assert.ok(
      Math.abs(hourPoint[1] - mean) <= 0.001,
      `hour mean ${hourPoint[1]}, minutes ${nineMemfs.join(', ')}`,
    );
    const uptimeHour = valuesOf(hours, UPTIME).find(([t]) => t === hourPoint[0]);
    assert.equal(uptimeHour?.[1], minuteOf(UPTIME, 59), 'hour counter: the end of its last minute');
    return { end, checkedBefore, hourValue: hourPoint[1], serverNow: now() };
  } finally {
    await recorder.stop().catch(() => undefined);
    await server.close();
  }
}

const NINE = Date.UTC(2026, 0, 5, 9) / 1000;

describe('metrics query past the raw window, from the history (real server)', () => {
  it('answers long ranges with the collected values per minute and per hour, also after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'history-api-'));
    const recorder = new SnapshotRecorder();
    try {
      const { end, checkedBefore, hourValue, serverNow } = await firstRun(dir, recorder);
      // A restart a minute later (server time): the minutes and the hour are read back from disk.
      const clock = fastClock(serverNow + 60_000);
      const later = clock.now;
      const server = await startServer({ dir, now: later, config: config() });
      clock.go();
      try {
        await until(later, serverNow + 60_000 + 6 * 15_000);
        const again = await query(server, { timerange_sec: HOUR, interval_sec: 60, metrics: ITEMS });
        const checkedAfter = checkMinutes(again, recorder, end - 300);
        for (const [step, values] of checkedBefore)
          assert.deepEqual(checkedAfter.get(step), values, `minute ${step} after the restart`);
        const hoursAgain = await query(server, {
          timerange_sec: 30 * 86_400,
          interval_sec: HOUR,
          metrics: ITEMS,
        });
        const hourAgain = valuesOf(hoursAgain, MEMFS).find(([t]) => t >= NINE && t < NINE + HOUR);
        assert.equal(hourAgain?.[1], hourValue, 'the hour after the restart');
        // Beyond every retention: the answer is bounded by the longest one (400 days).
        const year = await query(server, { timerange_sec: 10 * 365 * 86_400, interval_sec: 86_400 });
        for (const series of year.metrics) assert.ok(series.values.length <= 400);
      } finally {
        await server.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
