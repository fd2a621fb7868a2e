import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readProcessConfig } from '../../src/process/config/process-config.js';
import { disagreementOf } from '../helpers/config-reader-differential.js';
import { seededRandom } from '../helpers/seeded-random.js';

/**
 * The contract's schema reads process config bodies (src/process/config/contract.ts through
 * src/http/request-check.ts) where a hand-written reader did: on a seeded corpus of generated
 * bodies, valid and broken in every field, both must accept and refuse the same bodies with the
 * same details in the same order, and make the same config. (Every body the other tests send is
 * compared the same way by the test server, test/helpers/server.ts.)
 */

const BODIES = 10_000;
const SEED = 25;

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const STRINGS = ['', 'x', 'in', 'out', 'mem:/a.ts', '{memfs}/{processid}.m3u8', '#other:output=out', 'ä/b'];
const NUMBERS = [0, 1, 7, -1, -0, 0.5, 3.25, -2.5, 2 ** 53, Number.MAX_SAFE_INTEGER, 1e300];

/** Mostly a count, sometimes a number at or past an edge. */
function someNumber(random: Random): number {
  return random() < 0.85 ? pick(random, [0, 1, 7, 60]) : pick(random, NUMBERS);
}

/** Any JSON value, shallow or nested, or absent. */
function anyValue(random: Random, depth = 0): unknown {
  switch (Math.floor(random() * (depth > 1 ? 7 : 10))) {
    case 0:
      return undefined;
    case 1:
      return null;
    case 2:
      return pick(random, STRINGS);
    case 3:
      return pick(random, NUMBERS);
    case 4:
      return random() < 0.5;
    case 5:
      return [];
    case 6:
      return ['a', 'b'];
    case 7:
      return ['a', pick(random, [1, null, true, {}])];
    case 8:
      return { a: anyValue(random, depth + 1) };
    default:
      return [anyValue(random, depth + 1), anyValue(random, depth + 1)];
  }
}

/** Mostly a value of the field's kind, sometimes anything. */
function field(random: Random, kind: () => unknown): unknown {
  return random() < 0.96 ? kind() : anyValue(random);
}

function cleanupRule(random: Random): unknown {
  if (random() < 0.03) return anyValue(random);
  return withFields(random, {
    pattern: () => pick(random, ['mem:/*.ts', 'disk:/x/**', 'nope', '']),
    max_files: () => someNumber(random),
    max_file_age_seconds: () => someNumber(random),
    purge_on_delete: () => random() < 0.5,
  });
}

function io(random: Random, output: boolean): unknown {
  if (random() < 0.03) return anyValue(random);
  return withFields(random, {
    id: () => pick(random, ['in', 'out', 'a', '', 'b']),
    address: () => pick(random, STRINGS),
    options: () => pick(random, [[], ['-c', 'copy'], ['-f', 'hls']]),
    cleanup: () => (output || random() < 0.3 ? list(random, () => cleanupRule(random)) : undefined),
  });
}

function list(random: Random, item: () => unknown): unknown[] {
  return Array.from({ length: Math.floor(random() * 4) }, item);
}

/** An object with each field present (a value of its kind or anything) or absent, plus unknown ones. */
function withFields(random: Random, kinds: Record<string, () => unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(kinds)) {
    if (random() < 0.7) result[name] = field(random, kind);
  }
  if (random() < 0.1) result.unknown_field = anyValue(random);
  return result;
}

function configBody(random: Random): unknown {
  if (random() < 0.03) return anyValue(random);
  return withFields(random, {
    id: () => pick(random, ['p', 'x', '', 'a/b']),
    type: () => pick(random, ['ffmpeg', 'gstreamer']),
    reference: () => pick(random, STRINGS),
    input: () => list(random, () => io(random, false)),
    output: () => list(random, () => io(random, true)),
    options: () => pick(random, [[], ['-loglevel', 'info']]),
    reconnect: () => random() < 0.5,
    reconnect_delay_seconds: () => someNumber(random),
    autostart: () => random() < 0.5,
    stale_timeout_seconds: () => someNumber(random),
    limits: () =>
      withFields(random, {
        cpu_usage: () => someNumber(random),
        memory_mbytes: () => someNumber(random),
        waitfor_seconds: () => someNumber(random),
      }),
  });
}

describe('process config: the schema reads bodies as the hand-written reader did', () => {
  it(`agrees on ${BODIES} generated bodies (seed ${SEED})`, () => {
    const random = seededRandom(SEED);
    const disagreements = [];
    let accepted = 0;
    for (let index = 0; index < BODIES; index++) {
      const body = configBody(random);
      const disagreement = disagreementOf(body);
      if (disagreement !== undefined) disagreements.push(disagreement);
      if (readProcessConfig(body).config !== undefined) accepted++;
    }
    assert.deepEqual(disagreements.slice(0, 5), [], `${disagreements.length} disagreements`);
    // The corpus exercises both sides: a generator that only made broken bodies would agree trivially.
    assert.ok(accepted > BODIES / 10 && accepted < BODIES * 0.9, `accepted ${accepted} of ${BODIES}`);
  });

  it('agrees on the corners', () => {
    const corners: unknown[] = [
      undefined,
      null,
      [],
      'x',
      0,
      {},
      { limits: [] },
      { limits: null, id: null, input: null },
      { limits: 3, id: 5 },
      { options: ['a', 1, 2] },
      { input: [{ id: 3 }, 5, null] },
      { input: [{ cleanup: 'ignored for inputs' }] },
      { output: [{ cleanup: [null, { pattern: 1 }, 'x'] }] },
      { output: [{ id: 'a' }, { id: 'a' }, { id: '' }, {}] },
      { reconnect_delay_seconds: 2 ** 53 },
      { stale_timeout_seconds: -0, limits: { cpu_usage: 0.25, memory_mbytes: 1.5 } },
      { type: 'other', unknown: { deep: [1] } },
    ];
    for (const body of corners) assert.equal(disagreementOf(body), undefined, JSON.stringify(body));
  });
});
