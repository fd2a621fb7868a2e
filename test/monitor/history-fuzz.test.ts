import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { seededRandom } from '../helpers/seeded-random.js';
import { startServer } from '../helpers/server.js';
import {
  cpuIdleAt,
  cpuIdleMinutesOverHttp,
  HISTORY_MINUTES,
  HISTORY_T0,
  pointsOfTier,
  TIER_WINDOW_SEC,
  windowFiles,
  writeKnownHistory,
  type TierName,
  type WindowFile,
} from './support/damaged-history.js';
import { openHistory, recordingLogger } from './support/history.js';

/**
 * The history directory fuzzed (issue 24, item 8; docs/history.md, Damage): a known history
 * (support/damaged-history.ts) copied and damaged at random (truncated files, flipped bytes,
 * foreign files and directories), then loaded. Loading never throws, every point whose bytes the
 * damage did not touch is still answered with its value, and no file is warned about twice.
 * A thousand cases drive the history module; a handful start the real server on the damaged
 * directory and ask for the points over HTTP. A failure names its seed.
 */

const SEED = 24_008;
const MODULE_CASES = 1000;
const SERVER_CASES = 5;
const T0_SEC = HISTORY_T0 / 1000;

/** What a case did to the directory: per window file, the byte spans it changed or cut. */
interface Damage {
  touched: Map<string, [number, number][]>;
  actions: string[];
}

/** Applies one to three random damages to the history at `dir` (whose files are `files`). */
function damage(dir: string, files: Map<string, WindowFile>, random: () => number): Damage {
  const result: Damage = { touched: new Map(), actions: [] };
  const names = [...files.keys()];
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const touch = (key: string, from: number, to: number): void => {
    const spans = result.touched.get(key) ?? [];
    spans.push([from, to]);
    result.touched.set(key, spans);
  };
  for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
    const kind = random();
    if (kind < 0.35) {
      const key = pick(names);
      const path = join(dir, key);
      const size = readFileSync(path).length;
      const length = Math.floor(random() * size);
      truncateSync(path, length);
      touch(key, length, Number.MAX_SAFE_INTEGER);
      result.actions.push(`truncate ${key} to ${length}`);
    } else if (kind < 0.7) {
      const key = pick(names);
      const path = join(dir, key);
      const bytes = readFileSync(path);
      if (bytes.length === 0) continue;
      const at = Math.floor(random() * bytes.length);
      const count = Math.min(1 + Math.floor(random() * 16), bytes.length - at);
      for (let i = at; i < at + count; i++) bytes[i] = bytes[i]! ^ (1 + Math.floor(random() * 255));
      writeFileSync(path, bytes);
      touch(key, at, at + count);
      result.actions.push(`flip ${count} bytes of ${key} at ${at}`);
    } else {
      result.actions.push(foreignEntry(dir, files, random, pick));
    }
  }
  return result;
}

/** Adds a foreign file or directory to a tier: named like a window file or not, random content. */
function foreignEntry(
  dir: string,
  files: Map<string, WindowFile>,
  random: () => number,
  pick: <T>(items: readonly T[]) => T,
): string {
  const tier = pick(['minute', 'hour'] as const);
  const windowSec = TIER_WINDOW_SEC[tier];
  const start = T0_SEC + (Math.floor(random() * 20) - 10) * windowSec;
  const name = pick([
    `${start}.wal`,
    `${start}.seg`,
    `${start + 60}.wal`,
    `${start}.seg.tmp`,
    'notes.txt',
    `${'9'.repeat(20)}.wal`,
  ]);
  const path = join(dir, tier, name);
  if (files.has(`${tier}/${name}`)) return `nothing (${name} exists)`;
  rmSync(path, { recursive: true, force: true });
  if (name.endsWith('.seg') && random() < 0.3) {
    // A sealed file of another window (or tier) under this name: its points must not show up here.
    const sealed = pick([...files.keys()].filter((key) => key.endsWith('.seg')));
    cpSync(join(dir, sealed), path);
    return `copy of ${sealed} as ${tier}/${name}`;
  }
  const bytes = Buffer.alloc(Math.floor(random() * 600));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
  if (random() < 0.4) {
    mkdirSync(path);
    writeFileSync(join(path, 'inside'), bytes);
    return `directory ${tier}/${name}`;
  }
  writeFileSync(path, bytes);
  return `file ${tier}/${name} of ${bytes.length} bytes`;
}

/**
 * Whether the damage left alone the bytes a point of series `key` at `stepSec` is read from: its
 * log record, or its sealed file's index record and the series' sections there. Undefined: no
 * file holds it (a provisional point).
 */
function isIntact(
  files: Map<string, WindowFile>,
  touched: Map<string, [number, number][]>,
  tier: TierName,
  key: string,
  stepSec: number,
): boolean | undefined {
  const start = stepSec - (stepSec % TIER_WINDOW_SEC[tier]);
  const untouched = (fileKey: string, [from, to]: [number, number]): boolean =>
    (touched.get(fileKey) ?? []).every(([a, b]) => b <= from || a >= to);
  const sealedKey = `${tier}/${start}.seg`;
  const sealed = files.get(sealedKey);
  if (sealed !== undefined) {
    const sections = sealed.sections!.get(key);
    return sections !== undefined && untouched(sealedKey, sealed.index!) && untouched(sealedKey, sections);
  }
  const logKey = `${tier}/${start}.wal`;
  const record = files.get(logKey)?.records?.get(stepSec);
  return record === undefined ? undefined : untouched(logKey, record);
}

describe('history directory fuzzing', async () => {
  const template = mkdtempSync(join(tmpdir(), 'history-fuzz-template-'));
  await writeKnownHistory(template);
  const files = windowFiles(template);
  const reference = await openHistory(template);
  const expected = {
    minute: await pointsOfTier(reference, reference.minute),
    hour: await pointsOfTier(reference, reference.hour),
  };
  await reference.close();

  it(`loads and answers every intact point after ${MODULE_CASES} random damages`, async () => {
    const work = mkdtempSync(join(tmpdir(), 'history-fuzz-'));
    let checkedPoints = 0;
    try {
      for (let n = 0; n < MODULE_CASES; n++) {
        const seed = SEED + n;
        const dir = join(work, String(n));
        cpSync(template, dir, { recursive: true });
        const done = damage(dir, files, seededRandom(seed));
        const context = `seed ${seed}: ${done.actions.join('; ')}`;
        const { logger, lines } = recordingLogger();
        const history = await openHistory(dir, logger);
        const minutes = await pointsOfTier(history, history.minute);
        for (const [key, points] of minutes)
          for (const [stepSec, value] of points)
            assert.equal(
              value,
              expected.minute.get(key)?.get(stepSec),
              `${context}: invented ${key} at ${stepSec}`,
            );
        for (const tier of ['minute', 'hour'] as const) {
          const answered = tier === 'minute' ? minutes : await pointsOfTier(history, history[tier]);
          for (const [key, points] of expected[tier]) {
            for (const [stepSec, value] of points) {
              if (isIntact(files, done.touched, tier, key, stepSec) !== true) continue;
              checkedPoints++;
              assert.equal(
                answered.get(key)?.get(stepSec),
                value,
                `${context}: ${tier} ${key} at ${stepSec}`,
              );
            }
          }
        }
        await history.close();
        const named = lines
          .filter((line) => line.msg.startsWith('metrics history'))
          .map((line) => line.file ?? (line as { dir?: string }).dir);
        assert.ok(
          named.every((file) => file !== undefined),
          `${context}: a line without its file ${JSON.stringify(lines)}`,
        );
        assert.equal(
          new Set(named).size,
          named.length,
          `${context}: a file named twice ${JSON.stringify(lines)}`,
        );
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    assert.ok(checkedPoints > MODULE_CASES * 1000, `${checkedPoints} points checked`);
  });

  it(`starts the real server on ${SERVER_CASES} damaged directories and answers every intact minute`, async () => {
    for (let n = 0; n < SERVER_CASES; n++) {
      const seed = SEED + MODULE_CASES + n;
      const dir = mkdtempSync(join(tmpdir(), 'history-fuzz-server-'));
      try {
        cpSync(template, join(dir, 'db', 'metrics'), { recursive: true });
        const done = damage(join(dir, 'db', 'metrics'), files, seededRandom(seed));
        const startMs = HISTORY_T0 + (HISTORY_MINUTES * 60 + 5) * 1000;
        const realStart = Date.now();
        const server = await startServer({
          dir,
          now: () => startMs + (Date.now() - realStart),
          config: { metrics: { enable: true } },
        });
        let answered: Map<number, number>;
        try {
          answered = await cpuIdleMinutesOverHttp(server.url);
        } finally {
          await server.close();
        }
        let checked = 0;
        for (let minute = 0; minute < HISTORY_MINUTES; minute++) {
          const stepSec = T0_SEC + minute * 60;
          if (isIntact(files, done.touched, 'minute', 'cpu_idle', stepSec) !== true) continue;
          checked++;
          assert.equal(
            answered.get(stepSec),
            cpuIdleAt(minute),
            `seed ${seed}: ${done.actions.join('; ')}: minute ${minute}`,
          );
        }
        assert.ok(checked > 0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it('removes the template', () => {
    rmSync(template, { recursive: true, force: true });
  });
});
