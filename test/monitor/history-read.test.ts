import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { pointsBetween } from '../../src/monitor/history/index.js';
import { BitReader } from '../../src/monitor/history/bit-stream.js';
import { decodeBlockColumn, encodeBlockColumn } from '../../src/monitor/history/block-column.js';
import { ColumnEncoder, type ColumnPrediction } from '../../src/monitor/history/column-codec.js';
import { decodeColumn } from '../../src/monitor/history/column-codec.js';
import { Tier } from '../../src/monitor/history/tier.js';
import { seededRandom as random } from '../helpers/seeded-random.js';
import { processSeries as info } from './support/history.js';

/**
 * The fast read path of sealed windows (the column decoders, sealed-read.ts)
 * against straightforward versions on random data: the column decoder against a bit-by-bit
 * decoder written from the format's description (docs/history.md#file-formats-dirminute-dirhour), and whole tiers
 * of a thousand series with gaps, NaN and series that come and go, read cold, warm and partly
 * cached, against the points that were appended.
 */

const SPECIAL = [Number.NaN, Infinity, -Infinity, -0, 0, 1e300, 2 ** 60, 2 ** 53, -(2 ** 53), 0.001, 7.5];

/** A value the codec keeps exactly: integers, 3 decimals, specials, noise of every size. */
function randomValue(next: () => number, level: number): number {
  const kind = next();
  if (kind < 0.04) return SPECIAL[Math.floor(next() * SPECIAL.length)]!;
  const noise = 2 ** Math.floor(next() * 34);
  if (kind < 0.5) return level + Math.round((next() - 0.5) * noise);
  return Math.round((level + (next() - 0.5) * noise) * 1000) / 1000;
}

/** Columns as a chart sees them: runs of flat, steady, noisy and special values. */
function randomColumn(next: () => number, length: number): number[] {
  const values: number[] = [];
  let level = Math.round((next() - 0.5) * 1e6);
  const rate = Math.round(next() * 1e4);
  while (values.length < length) {
    const kind = Math.floor(next() * 4);
    const run = 1 + Math.floor(next() * 60);
    for (let i = 0; i < run && values.length < length; i++) {
      if (kind === 0) values.push(level);
      else if (kind === 1) values.push((level += rate));
      else values.push(randomValue(next, level));
    }
  }
  return values;
}

/**
 * The column format decoded bit by bit, as docs/history.md describes it: a scale bit, then per
 * value `hi` one bits and a zero and `k` low bits (`hi ≤ 2`), or `111`, a 6-bit width and `z` (63:
 * a raw float64); `z` zig-zag maps the residual against "same as before" (hold) or "same increase
 * as before" (rate); `k` is the smallest with 2^k ≥ the weighted mean of the recent `z`.
 */
function referenceDecode(stored: Uint8Array, prediction: ColumnPrediction, count: number): number[] {
  // Past the stored bytes every bit is zero (trailing zero bytes are not stored): up to 64 bits a value.
  const bytes = new Uint8Array(stored.length + 8 * count + 16);
  bytes.set(stored);
  const bits = new BitReader(bytes);
  const readWide = (width: number): number =>
    width > 32 ? bits.read(width - 32) * 2 ** 32 + bits.read(32) : bits.read(width);
  let scale = bits.read(1) === 1 ? 1000 : 1;
  let previous = Number.NaN;
  let delta = 0;
  let sum = 0;
  const out: number[] = [];
  const advance = (q: number): void => {
    delta = Number.isNaN(q) || Number.isNaN(previous) ? 0 : q - previous;
    previous = q;
  };
  const scaled = (value: number): number => {
    if (Object.is(value, -0)) return Number.NaN;
    const q = Math.round(value * scale);
    return Number.isSafeInteger(q) && (scale !== 1 || q === value) ? q : Number.NaN;
  };
  for (let i = 0; i < count; i++) {
    let hi = 0;
    while (hi < 3 && bits.read(1) === 1) hi++;
    let z: number;
    if (hi < 3) {
      let k = 0;
      while (2 ** (k + 4) < sum) k++;
      z = hi * 2 ** k + readWide(k);
    } else {
      const width = bits.read(6);
      if (width === 63) {
        const view = new DataView(new ArrayBuffer(8));
        view.setUint32(0, bits.read(32));
        view.setUint32(4, bits.read(32));
        const value = view.getFloat64(0);
        out.push(value);
        if (i > 0 && scale === 1 && Number.isFinite(value) && !Number.isInteger(value)) {
          scale = 1000;
          advance(Number.NaN);
        } else advance(scaled(value));
        continue;
      }
      z = readWide(width);
    }
    const residual = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
    if (i === 0) {
      out.push(residual / scale);
      advance(residual);
      continue;
    }
    sum = sum - Math.floor(sum / 16) + Math.min(z, 2 ** 26);
    const q = (prediction === 'rate' ? previous + delta : previous) + residual;
    out.push(q / scale);
    advance(q);
  }
  return out;
}

/**
 * The block column (format 3's first column) decoded plainly, as docs/history.md describes it: a
 * scale byte, the exceptions (index deltas and raw float64s), the first value as a zig-zag varint,
 * then blocks of 32 residuals: a width byte and the residuals in that many bits each, padded to a
 * byte; residuals past the stored bytes are 0. At an exception the value is the raw one, and what
 * follows goes on from its scaled value, or from the prediction when it has none.
 */
function referenceBlockDecode(stored: Uint8Array, prediction: ColumnPrediction, count: number): number[] {
  const view = new DataView(stored.buffer, stored.byteOffset, stored.byteLength);
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    for (let factor = 1; ; factor *= 128) {
      const byte = stored[pos++]!;
      value += (byte & 0x7f) * factor;
      if (byte < 0x80) return value;
    }
  };
  const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
  const scale = stored[pos++] === 1 ? 1000 : 1;
  const exceptions = new Map<number, number>();
  let index = 0;
  for (let e = varint(); e > 0; e--) {
    index += varint();
    exceptions.set(index, view.getFloat64(pos, true));
    pos += 8;
  }
  const z = [varint()];
  while (z.length < count && pos < stored.length) {
    const width = stored[pos++]!;
    const n = Math.min(32, count - z.length);
    const bits = new BitReader(stored.subarray(pos, pos + Math.ceil((n * width) / 8)));
    for (let j = 0; j < n; j++)
      z.push(width > 32 ? bits.read(width - 32) * 2 ** 32 + bits.read(32) : bits.read(width));
    pos += Math.ceil((n * width) / 8);
  }
  const scaled = (value: number): number => {
    if (Object.is(value, -0)) return Number.NaN;
    const q = Math.round(value * scale);
    return Number.isSafeInteger(q) && q / scale === value ? q : Number.NaN;
  };
  const out: number[] = [];
  let previous = 0;
  let delta = 0;
  for (let i = 0; i < count; i++) {
    const predicted = i === 0 ? 0 : prediction === 'rate' ? previous + delta : previous;
    let q = predicted + unzigzag(z[i] ?? 0);
    const raw = exceptions.get(i);
    if (raw !== undefined) {
      if (!Number.isNaN(scaled(raw))) q = scaled(raw);
      out.push(raw);
    } else out.push(q / scale);
    if (i > 0) delta = q - previous;
    previous = q;
  }
  return out;
}

const T0 = Date.UTC(2026, 0, 5) / 1000;
const OPTIONS = { name: 'minute', stepSec: 60, windowSec: 3600, retentionSec: 30 * 86_400 };

function openTier(dir: string): Tier {
  const tier = new Tier(dir, OPTIONS, pino({ level: 'silent' }));
  tier.load();
  return tier;
}

type Expected = Map<string, { times: number[]; values: number[] }>;

/** What `tier.read` answers for the series `keys` in [fromSec, toSec], against the appended points. */
async function assertReads(
  tier: Tier,
  expected: Expected,
  keys: ReadonlySet<string>,
  fromSec: number,
  toSec: number,
): Promise<void> {
  const read = await tier.read((series) => keys.has(series.key), fromSec, toSec);
  let compared = 0;
  for (const key of keys) {
    const want = expected.get(key);
    const times: number[] = [];
    const values: number[] = [];
    want?.times.forEach((time, i) => {
      if (time < fromSec || time > toSec) return;
      times.push(time);
      values.push(want.values[i]!);
    });
    const got = read.get(key);
    const points =
      got === undefined ? { timesSec: [], values: [] } : pointsBetween(got.pieces, fromSec, toSec);
    assert.deepEqual(points.timesSec, times, key);
    assert.deepEqual(points.values, values, key);
    compared += times.length;
  }
  assert.ok(compared > 0, 'the query found points');
}

interface EncodedColumn {
  values: number[];
  prediction: ColumnPrediction;
  bytes: Uint8Array;
}

/**
 * Decodes `columns` one after another into one shared buffer of `total` values (each at its
 * offset), and checks every value: the reference decoder gives back the values encoded, and the
 * fast decoder what the reference gives, bit for bit (NaN, −0).
 */
function assertDecodes(
  columns: readonly EncodedColumn[],
  total: number,
  decode: (
    input: Uint8Array,
    prediction: ColumnPrediction,
    out: Float64Array,
    from: number,
    count: number,
  ) => void,
  reference: (stored: Uint8Array, prediction: ColumnPrediction, count: number) => number[],
): void {
  const out = new Float64Array(total);
  let at = 0;
  for (const { values, prediction, bytes } of columns) {
    decode(bytes, prediction, out, at, values.length);
    const expected = reference(bytes, prediction, values.length);
    for (let i = 0; i < values.length; i++) {
      assert.ok(Object.is(expected[i], values[i]), `reference #${i}: ${expected[i]} ≠ ${values[i]}`);
      assert.ok(Object.is(out[at + i], expected[i]), `fast #${i}: ${out[at + i]} ≠ ${expected[i]}`);
    }
    at += values.length;
  }
  assert.equal(at, total);
}

describe('history read path against straightforward decoding', () => {
  it('decodes thousands of random columns like a bit-by-bit decoder, into shared buffers at offsets', () => {
    const next = random(3);
    const columns: EncodedColumn[] = [];
    let total = 0;
    for (let c = 0; c < 3000; c++) {
      const values = randomColumn(next, 1 + Math.floor(next() * 300));
      const prediction: ColumnPrediction = next() < 0.5 ? 'hold' : 'rate';
      const encoder = new ColumnEncoder(prediction);
      for (const value of values) encoder.append(value);
      columns.push({ values, prediction, bytes: encoder.finish() });
      total += values.length;
    }
    assertDecodes(columns, total, decodeColumn, referenceDecode);
  });

  it('encodes and decodes thousands of random block columns like a plain decoder, into shared buffers at offsets', () => {
    const next = random(4);
    const columns: EncodedColumn[] = [];
    let total = 0;
    for (let c = 0; c < 3000; c++) {
      const values = randomColumn(next, 1 + Math.floor(next() * 400));
      // Jumps past 2^52 and back: residuals that are not safe integers.
      if (c % 50 === 0) values.splice(Math.floor(next() * values.length), 0, 2 ** 53 - 1, -(2 ** 53) + 1, 5);
      const prediction: ColumnPrediction = next() < 0.5 ? 'hold' : 'rate';
      columns.push({ values, prediction, bytes: encodeBlockColumn(values, prediction) });
      total += values.length;
    }
    assertDecodes(columns, total, decodeBlockColumn, referenceBlockDecode);
  });

  it('reads a thousand series with gaps, NaN and comings and goings: cold, warm and partly cached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-read-'));
    try {
      const next = random(5);
      const names = ['fps', 'frame', 'cpu', 'size', 'q', 'memory', 'uptime'];
      const pool = Array.from({ length: 1000 }, (_, i) => info(`p${Math.floor(i / 7)}`, names[i % 7]!));
      const expected: Expected = new Map();
      const live = pool.map(() => next() < 0.8);
      const dense = pool.map((_, i) => i % 5 === 0);
      const levels = pool.map(() => Math.round(next() * 1e6));
      let tier = openTier(dir);
      const steps = 9 * 60 + 25;
      for (let k = 0; k < steps; k++) {
        const step = T0 + k * 60;
        const points = [];
        for (let i = 0; i < pool.length; i++) {
          if (!dense[i] && next() < 0.01) live[i] = !live[i];
          if (!dense[i] && (!live[i] || next() < 0.05)) continue;
          const series = pool[i]!;
          const value =
            series.kind === 'counter'
              ? (levels[i]! += Math.round(next() * 5000))
              : randomValue(next, levels[i]!);
          points.push({ series, values: series.kind === 'counter' ? [value] : [value, value] });
          const seen = expected.get(series.key) ?? { times: [], values: [] };
          seen.times.push(step);
          seen.values.push(value);
          expected.set(series.key, seen);
        }
        await tier.appendStep(step, points);
      }
      await tier.close();
      assert.ok(readdirSync(join(dir, 'minute')).filter((name) => name.endsWith('.seg')).length >= 8);
      const end = T0 + steps * 60;
      const all = new Set(pool.map((series) => series.key));

      // Cold: a fresh tier, nothing cached; a series with a point every step is one piece.
      tier = openTier(dir);
      await assertReads(tier, expected, all, T0, end);
      const steady = (await tier.read((series) => series.key === pool[0]!.key, T0, end)).get(pool[0]!.key)!;
      assert.equal(steady.pieces.length, 2, 'the sealed windows as one piece, then the open window');
      // Warm: everything cached, so the sealed files are not read again (moved away meanwhile, a
      // read of one would fail and drop it).
      const sealed = readdirSync(join(dir, 'minute'))
        .filter((name) => name.endsWith('.seg'))
        .map((name) => join(dir, 'minute', name));
      for (const path of sealed) renameSync(path, `${path}.away`);
      await assertReads(tier, expected, all, T0, end);
      for (const path of sealed) renameSync(`${path}.away`, path);
      await tier.close();

      // Partly cached: a subset over part of the range, then an overlapping subset over another.
      tier = openTier(dir);
      const some = new Set([...all].filter(() => next() < 0.3));
      const others = new Set([...all].filter(() => next() < 0.3));
      await assertReads(tier, expected, some, T0 + 3 * 3600 + 600, T0 + 6 * 3600 - 60);
      await assertReads(tier, expected, others, T0 + 1800, T0 + 8 * 3600 + 1200);
      await assertReads(tier, expected, all, T0, end);
      await assertReads(tier, expected, some, T0, end);
      await tier.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
