import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { pointsBetween } from '../../src/monitor/history/index.js';
import { ColumnEncoder, type ColumnPrediction } from '../../src/monitor/history/column-codec.js';
import { decodeColumn } from '../../src/monitor/history/column-codec.js';
import { SeriesChunkEncoder } from '../../src/monitor/history/series-chunk.js';
import { Tier } from '../../src/monitor/history/tier.js';
import { seededRandom as random } from '../helpers/seeded-random.js';
import { processSeries as info, recordingLogger } from './support/history.js';

/**
 * The columnar segment format (docs/history.md#file-formats-dirminute-dirhour): the column codec on random values
 * of every kind that can reach it, the series chunks with and without gaps, whole tiers with
 * series that come and go written, sealed and read back from disk, damaged files, and sealed
 * windows of the unreleased formats 1 and 2 (test/fixtures/history/v1-minute, v2-minute), skipped.
 */

const SPECIAL = [Number.NaN, Infinity, -Infinity, -0, 0, 1e300, -1e300, 2 ** 60, 2 ** 53, -(2 ** 53), 0.001];

/**
 * Values a column may see: runs of integers, of 3-decimal values (the API's precision), of a
 * steady rate, noise of every size, special values; all exactly representable by the codec.
 */
function randomColumn(next: () => number, length: number): number[] {
  const values: number[] = [];
  let level = Math.round((next() - 0.5) * 1e6);
  const rate = Math.round(next() * 1e4);
  while (values.length < length) {
    const kind = Math.floor(next() * 7);
    const run = 1 + Math.floor(next() * 40);
    const noise = 2 ** Math.floor(next() * 40);
    for (let i = 0; i < run && values.length < length; i++) {
      if (kind === 0) values.push(level);
      else if (kind === 1) values.push((level += rate));
      else if (kind === 2) values.push(Math.round((next() - 0.5) * noise));
      else if (kind === 3) values.push(Math.round((next() - 0.5) * noise) / 1000);
      else if (kind === 4) values.push(SPECIAL[Math.floor(next() * SPECIAL.length)]!);
      else if (kind === 5) values.push((level += Math.round((next() - 0.5) * noise)));
      else values.push(Math.round(next() * 1000) / 1000);
    }
  }
  return values;
}

function roundTrip(values: readonly number[], prediction: ColumnPrediction): Float64Array {
  const encoder = new ColumnEncoder(prediction);
  for (const value of values) encoder.append(value);
  const out = new Float64Array(values.length);
  decodeColumn(encoder.finish(), prediction, out);
  return out;
}

function silentTier(dir: string, logger = pino({ level: 'silent' })): Tier {
  return new Tier(
    dir,
    { name: 'minute', stepSec: 60, windowSec: 6 * 3600, retentionSec: 7 * 86_400 },
    logger,
  );
}

const T0 = Date.UTC(2026, 0, 5) / 1000;

describe('history segment format 2 (columnar)', () => {
  it('round-trips random columns exactly: integers, 3 decimals, NaN, ±Infinity, −0, huge values', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const values = randomColumn(next, 1 + Math.floor(next() * 400));
      for (const prediction of ['hold', 'rate'] as const) {
        const decoded = roundTrip(values, prediction);
        values.forEach((value, i) =>
          assert.ok(
            Object.is(decoded[i], value),
            `seed ${seed} ${prediction} #${i}: ${decoded[i]} ≠ ${value}`,
          ),
        );
      }
    }
  });

  it('keeps any other float at the API precision (3 decimals), and a constant column in its first value', () => {
    const next = random(7);
    const values = Array.from({ length: 500 }, () => (next() - 0.5) * 100);
    const decoded = roundTrip(values, 'hold');
    values.forEach((value, i) => assert.equal(decoded[i], Math.round(value * 1000) / 1000));
    const constant = new ColumnEncoder('rate');
    for (let i = 0; i < 360; i++) constant.append(1_000_000 + 1500 * i);
    assert.ok(constant.finish().length <= 8, 'a steady counter costs its first value and first step');
  });

  it('stores steps only for series with gaps, and decodes both', () => {
    const dense = new SeriesChunkEncoder(['hold', 'hold']);
    const sparse = new SeriesChunkEncoder(['rate']);
    const steps: number[] = [];
    for (let step = 3; step < 300; step++) {
      dense.append(step, [step / 8, step]);
      if (step % 7 !== 0 && step % 11 !== 0) {
        sparse.append(step, [step * 100]);
        steps.push(step);
      }
    }
    assert.equal(dense.sections()[0]!.length, 0);
    assert.ok(sparse.sections()[0]!.length > 0);
    const d = dense.decode();
    assert.deepEqual(
      [...d.steps],
      Array.from({ length: 297 }, (_, i) => i + 3),
    );
    assert.deepEqual(
      [...d.values],
      Array.from({ length: 297 }, (_, i) => (i + 3) / 8),
    );
    const s = sparse.decode();
    assert.deepEqual([...s.steps], steps);
    assert.deepEqual(
      [...s.values],
      steps.map((step) => step * 100),
    );
  });

  it('reads back from sealed files every point of series that come and go, after a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-format-'));
    try {
      const next = random(11);
      const pool = Array.from({ length: 40 }, (_, i) =>
        info(`p${i % 8}`, ['fps', 'frame', 'cpu', 'size', 'q'][i % 5]!),
      );
      const expected = new Map<string, { times: number[]; values: number[] }>();
      let tier = silentTier(dir);
      tier.load();
      const live = pool.map(() => next() < 0.5);
      const levels = pool.map(() => Math.round(next() * 1e6));
      for (let k = 0; k < 4 * 360 + 17; k++) {
        const step = T0 + k * 60;
        const points = [];
        for (let i = 0; i < pool.length; i++) {
          if (next() < 0.02) live[i] = !live[i];
          if (!live[i]) continue;
          const series = pool[i]!;
          const value =
            series.kind === 'counter'
              ? (levels[i]! += Math.round(next() * 5000))
              : Math.round(next() * 1e5) / 1000;
          points.push({ series, values: series.kind === 'counter' ? [value] : [value, value + 1] });
          const seen = expected.get(series.key) ?? { times: [], values: [] };
          seen.times.push(step);
          seen.values.push(value);
          expected.set(series.key, seen);
        }
        await tier.appendStep(step, points);
        if (k === 800) {
          await tier.close();
          tier = silentTier(dir);
          tier.load();
        }
      }
      await tier.close();
      assert.ok(readdirSync(join(dir, 'minute')).filter((name) => name.endsWith('.seg')).length >= 4);
      tier = silentTier(dir);
      tier.load();
      const read = await tier.read(() => true, 0, T0 + 7 * 86_400);
      assert.equal(read.size, expected.size);
      for (const [key, { times, values }] of expected) {
        const got = pointsBetween(read.get(key)!.pieces, 0, T0 + 7 * 86_400);
        assert.deepEqual(got.timesSec, times, key);
        assert.deepEqual(got.values, values, key);
      }
      await tier.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('skips a torn sealed file when it loads, and the series of a damaged section when it is read, one line each', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-format-'));
    try {
      let tier = silentTier(dir);
      tier.load();
      const series = [info('p1', 'fps'), info('p1', 'frame')];
      for (let k = 0; k < 3 * 360 + 1; k++)
        await tier.appendStep(T0 + k * 60, [
          { series: series[0]!, values: [25 + (k % 9) / 100, 26] },
          { series: series[1]!, values: [k * 1500] },
        ]);
      await tier.close();
      const segments = readdirSync(join(dir, 'minute'))
        .filter((name) => name.endsWith('.seg'))
        .sort()
        .map((name) => join(dir, 'minute', name));
      assert.equal(segments.length, 3);
      // The last byte of the file is in the last section (the frame counter's values): the index still checks.
      const bytes = readFileSync(segments[0]!);
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x5a;
      writeFileSync(segments[0]!, bytes);
      // A torn file: cut in its index record (as if the rename had come before the data).
      writeFileSync(segments[1]!, readFileSync(segments[1]!).subarray(0, 30));
      const { logger, lines } = recordingLogger();
      tier = silentTier(dir, logger);
      tier.load();
      assert.deepEqual(
        lines.map((line) => [line.msg, line.file]),
        [['metrics history: damaged segment file skipped', segments[1]]],
      );
      const read = await tier.read(() => true, 0, T0 + 86_400);
      assert.deepEqual(
        lines.slice(1).map((line) => [line.msg, line.file]),
        [['metrics history: damaged series of a segment file skipped', segments[0]]],
      );
      const times = pointsBetween(read.get(series[1]!.key)!.pieces, 0, T0 + 86_400).timesSec;
      assert.equal(times[0], T0 + 2 * 6 * 3600, 'the third window still answers');
      assert.equal(times.length, 361);
      const fps = pointsBetween(read.get(series[0]!.key)!.pieces, 0, T0 + 86_400).timesSec;
      assert.equal(fps[0], T0, "the damaged file's other series still answers");
      assert.equal(fps.length, 360 + 361);
      await tier.read(() => true, 0, T0 + 86_400);
      assert.equal(lines.length, 2, 'a damaged file is not logged again');
      await tier.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Sealed windows written by the format-1 and format-2 writers of the unreleased 0.1.0: only
  // format 3 is read (issue 25), the others are skipped as damaged and left on disk.
  it('skips a sealed window of format 1 or 2 with one warning, and goes on writing next to it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-format-'));
    try {
      cpSync(join(import.meta.dirname, '..', 'fixtures', 'history', 'v1-minute'), join(dir, 'minute'), {
        recursive: true,
      });
      const w0 = Date.UTC(2026, 0, 5) / 1000;
      const older = join(dir, 'minute', `${w0 - 6 * 3600}.seg`);
      cpSync(join(import.meta.dirname, '..', 'fixtures', 'history', 'v2-minute', `${w0}.seg`), older);
      const { logger, lines } = recordingLogger();
      const tier = silentTier(dir, logger);
      tier.load();
      assert.deepEqual(
        lines.map((line) => [line.msg, line.file, (line as { problem?: string }).problem]),
        [
          ['metrics history: damaged segment file skipped', older, 'unknown format version 2'],
          [
            'metrics history: damaged segment file skipped',
            join(dir, 'minute', `${w0}.seg`),
            'unknown format version 1',
          ],
        ],
      );
      assert.equal((await tier.read(() => true, 0, w0 + 86_400)).size, 0);
      await tier.appendStep(w0 + 6 * 3600, [{ series: info('p1', 'fps'), values: [24, 25] }]);
      await tier.seal();
      const read = await tier.read((s) => s.key === info('p1', 'fps').key, 0, w0 + 86_400);
      const points = pointsBetween(read.get(info('p1', 'fps').key)!.pieces, 0, w0 + 86_400);
      assert.deepEqual([points.timesSec, points.values], [[w0 + 6 * 3600], [24]]);
      assert.equal(lines.length, 2);
      await tier.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
