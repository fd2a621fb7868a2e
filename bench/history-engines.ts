/**
 * The three ways bench/history.ts compares of keeping the history's points on disk, behind one
 * small interface: streamcore's chunk files (src/monitor/history, used through its `Tier`), plain
 * JSON lines (the baseline), and SQLite through better-sqlite3 (only when BENCH_BETTER_SQLITE3
 * names an installed copy: it is not a dependency of streamcore, see docs/history.md).
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pino } from 'pino';
import { Tier } from '../src/monitor/history/tier.js';
import type { SeriesInfo } from '../src/monitor/history/series-kind.js';
import type { TierPiece } from '../src/monitor/history/tier-piece.js';
import type { LoggedPoint } from '../src/monitor/history/window-log.js';

export type TierName = 'minute' | 'hour';

export const TIERS: Record<TierName, { stepSec: number; windowSec: number; retentionSec: number }> = {
  minute: { stepSec: 60, windowSec: 6 * 3600, retentionSec: 7 * 86_400 },
  hour: { stepSec: 3600, windowSec: 10 * 86_400, retentionSec: 400 * 86_400 },
};

/** What an engine's query returns; only its own `verify` looks inside. */
export type Answer = unknown;

export interface BenchEngine {
  readonly name: string;
  /** May resolve later (the chunk files write through the thread pool); awaited before the next call. */
  appendStep(tier: TierName, stepSec: number, points: readonly LoggedPoint[]): void | Promise<boolean>;
  /**
   * The query the bench times: the points of the series in `keys` with step start in
   * [fromSec, toSec], in the engine's own answer form (ready for a consumer: typed arrays, rows,
   * parsed values); the chunk files' answer comes as a promise, which the bench awaits.
   */
  query(tier: TierName, keys: ReadonlySet<string>, fromSec: number, toSec: number): Answer;
  /**
   * Verification, not timed: the points of an answer, each checked to lie in [fromSec, toSec]
   * (throws otherwise).
   */
  verify(answer: Answer, fromSec: number, toSec: number): number;
  diskBytes(tier: TierName): number;
  /** Forgets what is cached in memory (decoded values, parsed indexes): the next query is cold. */
  reopen(): void | Promise<void>;
  close(): void | Promise<void>;
}

export function chunkEngine(dir: string): BenchEngine & { dir: string; tier(name: TierName): Tier } {
  const logger = pino({ level: 'silent' });
  const open = (name: TierName): Tier => new Tier(dir, { name, ...TIERS[name] }, logger);
  let tiers = { minute: open('minute'), hour: open('hour') };
  return {
    name: 'chunk files (streamcore)',
    dir,
    tier: (name) => tiers[name],
    appendStep: (tier, stepSec, points) => tiers[tier].appendStep(stepSec, points),
    query: (tier, keys, fromSec, toSec) => readPoints(tiers[tier], keys, fromSec, toSec),
    verify: (answer, fromSec, toSec) => verifyPieces(answer as TierPiece[][], fromSec, toSec),
    diskBytes: (tier) => tiers[tier].diskBytes,
    async reopen() {
      await tiers.minute.close();
      await tiers.hour.close();
      tiers = { minute: open('minute'), hour: open('hour') };
      tiers.minute.load();
      tiers.hour.load();
    },
    async close() {
      await tiers.minute.close();
      await tiers.hour.close();
    },
  };
}

/**
 * The points of the series in `keys` with step start in [fromSec, toSec], read from `tier`: per
 * series its pieces cut to the range, as views of the decoded values (a binary search at each end
 * of a piece; a tier answers whole windows and the first and last may reach past the range).
 */
export async function readPoints(
  tier: Tier,
  keys: ReadonlySet<string>,
  fromSec: number,
  toSec: number,
): Promise<TierPiece[][]> {
  const answer: TierPiece[][] = [];
  for (const { pieces } of (await tier.read((s) => keys.has(s.key), fromSec, toSec)).values()) {
    const inRange: TierPiece[] = [];
    for (const piece of pieces) {
      const from = firstStepAtOrAfter(piece, fromSec);
      const to = firstStepAtOrAfter(piece, toSec + 1);
      if (to > from) {
        inRange.push({
          startSec: piece.startSec,
          stepSec: piece.stepSec,
          steps: piece.steps.subarray(from, to),
          values: piece.values.subarray(from, to),
        });
      }
    }
    answer.push(inRange);
  }
  return answer;
}

/** The index of the first point of `piece` whose step starts at or after `timeSec` (steps increase). */
function firstStepAtOrAfter(piece: TierPiece, timeSec: number): number {
  let low = 0;
  let high = piece.steps.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (piece.startSec + piece.steps[middle]! * piece.stepSec < timeSec) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Points of an answer of `readPoints`, every one checked to lie in [fromSec, toSec], in order. */
export function verifyPieces(answer: readonly TierPiece[][], fromSec: number, toSec: number): number {
  let count = 0;
  for (const pieces of answer) {
    let previous = Number.NEGATIVE_INFINITY;
    for (const piece of pieces) {
      if (piece.values.length !== piece.steps.length) throw new Error('a piece with fewer values than steps');
      for (let i = 0; i < piece.steps.length; i++) {
        const timeSec = piece.startSec + piece.steps[i]! * piece.stepSec;
        if (timeSec < fromSec || timeSec > toSec || timeSec <= previous)
          throw new Error(`point at ${timeSec} outside [${fromSec}, ${toSec}] or out of order`);
        previous = timeSec;
        count++;
      }
    }
  }
  return count;
}

/** Baseline: one JSON line per step, `{"t":…,"p":{"<series key>":[values…]}}`, one file per window. */
export function jsonEngine(dir: string): BenchEngine {
  for (const tier of Object.keys(TIERS)) mkdirSync(join(dir, tier), { recursive: true });
  const fileOf = (tier: TierName, stepSec: number): string =>
    join(dir, tier, `${stepSec - (stepSec % TIERS[tier].windowSec)}.jsonl`);
  return {
    name: 'plain JSON lines (baseline)',
    appendStep(tier, stepSec, points) {
      const line: Record<string, readonly number[]> = {};
      for (const { series, values } of points) line[series.key] = values;
      appendFileSync(fileOf(tier, stepSec), `${JSON.stringify({ t: stepSec, p: line })}\n`);
    },
    query(tier, keys, fromSec, toSec) {
      // Per step in the range: its time and the values of the wanted series it has.
      const answer: { t: number; values: number[][] }[] = [];
      for (const name of readdirSync(join(dir, tier)).sort()) {
        const start = Number(name.split('.')[0]);
        if (start + TIERS[tier].windowSec <= fromSec || start > toSec) continue;
        for (const text of readFileSync(join(dir, tier, name), 'utf8').split('\n')) {
          if (text === '') continue;
          const step = JSON.parse(text) as { t: number; p: Record<string, number[]> };
          if (step.t < fromSec || step.t > toSec) continue;
          const values: number[][] = [];
          for (const key of keys) {
            const point = step.p[key];
            if (point !== undefined) values.push(point);
          }
          answer.push({ t: step.t, values });
        }
      }
      return answer;
    },
    verify(answer, fromSec, toSec) {
      let count = 0;
      for (const { t, values } of answer as { t: number; values: number[][] }[]) {
        if (t < fromSec || t > toSec) throw new Error(`point at ${t} outside [${fromSec}, ${toSec}]`);
        count += values.length;
      }
      return count;
    },
    diskBytes: (tier) => directoryBytes(join(dir, tier)),
    reopen: () => undefined,
    close: () => undefined,
  };
}

interface Statement {
  run(...args: unknown[]): unknown;
  all(...args: unknown[]): unknown[];
}
interface Database {
  pragma(text: string): unknown;
  exec(text: string): unknown;
  prepare(text: string): Statement;
  transaction(run: () => void): () => void;
  close(): void;
}

/**
 * SQLite: per tier a table `(series, t, a, b)` keyed by (series, t), WITHOUT ROWID (the smallest
 * row layout), WAL journal, synchronous=NORMAL; series keys in a table of their own. `undefined`
 * when BENCH_BETTER_SQLITE3 is not set.
 */
export function sqliteEngine(dir: string): BenchEngine | undefined {
  const location = process.env.BENCH_BETTER_SQLITE3;
  if (location === undefined || location === '') return undefined;
  const require = createRequire(import.meta.url);
  const open = require(location) as new (file: string) => Database;
  mkdirSync(dir, { recursive: true });
  const db = new open(join(dir, 'history.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE series (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL)');
  for (const tier of Object.keys(TIERS)) {
    db.exec(
      `CREATE TABLE ${tier} (series INTEGER, t INTEGER, a REAL, b REAL, PRIMARY KEY (series, t)) WITHOUT ROWID`,
    );
  }
  const ids = new Map<string, number>();
  const addSeries = db.prepare('INSERT INTO series (key) VALUES (?) RETURNING id');
  const insert = {
    minute: db.prepare('INSERT INTO minute VALUES (?, ?, ?, ?)'),
    hour: db.prepare('INSERT INTO hour VALUES (?, ?, ?, ?)'),
  };
  const select = {
    minute: db.prepare('SELECT t, a FROM minute WHERE series = ? AND t BETWEEN ? AND ?'),
    hour: db.prepare('SELECT t, a FROM hour WHERE series = ? AND t BETWEEN ? AND ?'),
  };
  const idOf = (series: SeriesInfo): number => {
    let id = ids.get(series.key);
    if (id === undefined) {
      id = (addSeries.all(series.key)[0] as { id: number }).id;
      ids.set(series.key, id);
    }
    return id;
  };
  return {
    name: 'SQLite (better-sqlite3)',
    appendStep(tier, stepSec, points) {
      db.transaction(() => {
        for (const { series, values } of points)
          insert[tier].run(idOf(series), stepSec, values[0], values[1] ?? null);
      })();
    },
    query(tier, keys, fromSec, toSec) {
      const answer: unknown[][] = [];
      for (const key of keys) {
        const id = ids.get(key);
        if (id !== undefined) answer.push(select[tier].all(id, fromSec, toSec));
      }
      return answer;
    },
    verify(answer, fromSec, toSec) {
      let count = 0;
      for (const rows of answer as { t: number }[][]) {
        for (const { t } of rows) {
          if (t < fromSec || t > toSec) throw new Error(`point at ${t} outside [${fromSec}, ${toSec}]`);
          count++;
        }
      }
      return count;
    },
    diskBytes(tier) {
      // Both tiers share one file: the minute tier is filled first and measured before the hour tier.
      db.pragma('wal_checkpoint(TRUNCATE)');
      void tier;
      return directoryBytes(dir);
    },
    // Its page cache lives in the connection; the OS keeps the file cached either way.
    reopen: () => undefined,
    close: () => db.close(),
  };
}

function directoryBytes(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) bytes += statSync(join(dir, name)).size;
  return bytes;
}
