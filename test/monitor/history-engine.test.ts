import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { MetricHistory, pointsBetween, type Tier } from '../../src/monitor/history/index.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { openHistory, recordingLogger } from './support/history.js';

const T0 = Date.UTC(2026, 0, 5, 0, 0, 0);

/** Feeds `ticks` snapshots every `stepMs` from `startMs`: cpu_idle = tick % 10, net_rx{eth0} = 100·tick. */
function feed(
  history: MetricHistory,
  store: MetricStore,
  startMs: number,
  ticks: number,
  stepMs: number,
): void {
  const cpu = store.intern(METRIC_INDEX.get('cpu_idle')!, []);
  const rx = store.intern(METRIC_INDEX.get('net_rx')!, ['eth0']);
  for (let tick = 0; tick < ticks; tick++) {
    const batch = new SampleBatch();
    batch.add(cpu, tick % 10);
    batch.add(rx, 100 * tick);
    const time = startMs + tick * stepMs;
    store.commit(time, batch);
    history.ingest(time, batch, store);
  }
}

/** Every point of one series in a tier. */
async function pointsOf(
  history: MetricHistory,
  tier: Tier,
  key: string,
): Promise<{ timesSec: number[]; values: number[] }> {
  const series = (await history.read(tier, (s) => s.key === key, 0, T0 / 1000 + 86_400)).get(key);
  return pointsBetween(series?.pieces ?? [], 0, Number.MAX_SAFE_INTEGER);
}

describe('metrics history engine', () => {
  it('keeps minute and hour points across a reopen, and cuts a torn log record with one log line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-'));
    try {
      const store = new MetricStore(150);
      let history = await openHistory(dir);
      // 3 hours and 10 minutes of 10-second ticks.
      feed(history, store, T0, 6 * 190, 10_000);
      await history.close();
      history = await openHistory(dir);
      const cpu = await pointsOf(history, history.minute, 'cpu_idle');
      // The last minute (unfinished) was written on close too: 190 minutes.
      assert.equal(cpu.timesSec.length, 190);
      assert.equal(cpu.timesSec[0], T0 / 1000);
      assert.equal(cpu.values[0], 2.5); // mean of 0..5
      const rx = await pointsOf(history, history.minute, 'net_rx|4:eth0');
      assert.equal(rx.values[0], 500); // end of the first minute (tick 5)
      // Three finished hours, and the unfinished one (rebuilt from the minute tier) as a provisional point.
      assert.deepEqual((await pointsOf(history, history.hour, 'cpu_idle')).timesSec, [
        T0 / 1000,
        T0 / 1000 + 3600,
        T0 / 1000 + 7200,
        T0 / 1000 + 10_800,
      ]);
      assert.equal((await pointsOf(history, history.hour, 'net_rx|4:eth0')).values[0], 100 * (360 - 1));
      await history.close();

      // Tear the log: half a record at its end.
      const wal = join(
        dir,
        'minute',
        readdirSync(join(dir, 'minute')).find((name) => name.endsWith('.wal'))!,
      );
      const before = statSync(wal).size;
      appendFileSync(wal, readFileSync(wal).subarray(0, 30));
      const { logger, lines } = recordingLogger();
      history = await openHistory(dir, logger);
      const torn = lines.filter((line) => line.msg.includes('write-ahead log'));
      assert.equal(torn.length, 1);
      assert.equal(torn[0]!.file, wal);
      assert.equal((await pointsOf(history, history.minute, 'cpu_idle')).timesSec.length, 190);
      await history.close();
      assert.equal(statSync(wal).size, before, 'the torn tail is cut off');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('skips a damaged segment file with one log line and keeps the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-'));
    try {
      const store = new MetricStore(150);
      let history = await openHistory(dir);
      feed(history, store, T0, 6 * 60 * 13, 10_000); // 13 hours: two sealed 6-hour windows
      await history.close();
      const segments = readdirSync(join(dir, 'minute'))
        .filter((name) => name.endsWith('.seg'))
        .sort();
      assert.equal(segments.length, 2);
      const damaged = join(dir, 'minute', segments[0]!);
      const bytes = readFileSync(damaged);
      bytes[20] = bytes[20]! ^ 0xff;
      writeFileSync(damaged, bytes);
      const { logger, lines } = recordingLogger();
      history = await openHistory(dir, logger);
      assert.equal(lines.filter((line) => line.msg.includes('damaged')).length, 1);
      const cpu = await pointsOf(history, history.minute, 'cpu_idle');
      assert.equal(cpu.timesSec[0], T0 / 1000 + 6 * 3600, 'the first window is gone, the second is there');
      assert.equal(cpu.timesSec.length, 7 * 60);
      await history.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('drops files past the retention and the size cap, and gives back slots of series that went away', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-'));
    try {
      const history = new MetricHistory({
        dir,
        minuteRetentionDays: 1,
        hourRetentionDays: 400,
        maxSizeBytes: 0,
        logger: pino({ level: 'silent' }),
      });
      await history.load();
      const store = new MetricStore(2);
      const metric = METRIC_INDEX.get('restream_process')!;
      // Three days of one tick per minute; a new process every hour, each lives one hour.
      for (let minute = 0; minute < 3 * 1440; minute++) {
        const process = Math.floor(minute / 60);
        const batch = new SampleBatch();
        batch.add(store.intern(metric, [`p${process}`, 'running', 'start', 'fps']), 25);
        const time = T0 + minute * 60_000;
        store.commit(time, batch);
        history.ingest(time, batch, store);
      }
      await history.settled();
      assert.ok(history.slotCount <= 3, `slots: ${history.slotCount}`);
      const minuteFiles = readdirSync(join(dir, 'minute')).filter((name) => name.endsWith('.seg'));
      assert.ok(minuteFiles.length <= 5, `minute files: ${minuteFiles.join(', ')}`);
      await history.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the files under the size cap by deleting the oldest sealed ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-'));
    try {
      const history = new MetricHistory({
        dir,
        minuteRetentionDays: 7,
        hourRetentionDays: 400,
        maxSizeBytes: 1,
        logger: pino({ level: 'silent' }),
      });
      await history.load();
      feed(history, new MetricStore(150), T0, 6 * 60 * 13, 10_000);
      await history.settled();
      // Only the open windows' logs are left: they are never deleted by the cap.
      assert.deepEqual(
        readdirSync(join(dir, 'minute')).filter((name) => name.endsWith('.seg')),
        [],
      );
      assert.ok(readdirSync(join(dir, 'minute')).some((name) => name.endsWith('.wal')));
      await history.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
