import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toState } from '../../src/process/api/api-shapes.js';
import { stateJson } from '../../src/process/api/state-json.js';
import type { ProgressValues, StreamValues } from '../../src/process/progress/index.js';
import { STATES } from '../../src/process/supervise/index.js';
import { seededRandom } from '../helpers/seeded-random.js';

const ORDERS = ['start', 'stop'] as const;

const ODD_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  1 / 3,
  2.0005,
  1e21,
  1e-7,
  -1e-7,
  123456789.123456,
  NaN,
  Infinity,
  -Infinity,
];
const ODD_STRINGS = [
  '',
  'a',
  'quote " back \\ slash',
  'ünïcödé ✓',
  'tab\there\nnew',
  '\u0000\u001f',
  '\ud800 lone',
  '😀',
  '</script>',
];

function picker(random: () => number) {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const number = (): number => {
    const roll = random();
    if (roll < 0.3) return pick(ODD_NUMBERS);
    if (roll < 0.6) return Math.floor(random() * 1e6);
    return random() * 10 ** Math.floor(random() * 12 - 4);
  };
  const text = (): string => (random() < 0.5 ? pick(ODD_STRINGS) : random().toString(36).slice(2));
  /** Absent, present but `undefined`, or a value. */
  const maybe = <T>(value: () => T): T | undefined => (random() < 0.3 ? undefined : value());
  return { pick, number, text, maybe };
}

function randomStream(random: () => number): StreamValues {
  const { pick, number, text, maybe } = picker(random);
  const stream: StreamValues = {
    id: text(),
    address: text(),
    index: number(),
    stream: number(),
    format: text(),
    type: pick(['video', 'audio', 'data', text()]),
    codec: text(),
    frame: number(),
    keyframe: number(),
    fps: number(),
    framerate: { min: number(), max: number(), avg: number() },
    extradataBytes: number(),
    packet: number(),
    pps: number(),
    sizeBytes: number(),
    bitrate: number(),
    q: number(),
  };
  if (random() < 0.5) stream.pixFmt = text();
  if (random() < 0.5) {
    stream.width = number();
    if (random() < 0.8) stream.height = maybe(number);
  }
  if (random() < 0.5) stream.samplingHz = number();
  if (random() < 0.5) {
    stream.layout = text();
    if (random() < 0.8) stream.channels = maybe(number);
  }
  return stream;
}

function randomProgress(random: () => number): ProgressValues {
  const { number } = picker(random);
  const streams = (): StreamValues[] =>
    Array.from({ length: Math.floor(random() * 4) }, () => randomStream(random));
  return {
    inputs: streams(),
    outputs: streams(),
    frame: number(),
    packet: number(),
    fps: number(),
    q: number(),
    sizeBytes: number(),
    timeSeconds: number(),
    bitrate: number(),
    speed: number(),
    drop: number(),
    dup: number(),
  };
}

describe('state JSON', () => {
  it('is byte for byte JSON.stringify(toState(…)) on random states', () => {
    for (let seed = 1; seed <= 5000; seed++) {
      const random = seededRandom(seed);
      const { pick, number, text } = picker(random);
      const input: Parameters<typeof toState>[0] = {
        order: pick(ORDERS),
        state: pick(STATES),
        stateSeconds: number(),
        reconnectSeconds: number(),
        lastLogLine: text(),
        progress: randomProgress(random),
        memoryBytes: number(),
        cpuPercent: number(),
        command: Array.from({ length: Math.floor(random() * 6) }, text),
        pid: random() < 0.3 ? undefined : number(),
        inputLive:
          random() < 0.5
            ? undefined
            : Object.fromEntries(
                Array.from({ length: 1 + Math.floor(random() * 3) }, () => [
                  text(),
                  pick(['primary', 'fallback'] as const),
                ]),
              ),
      };
      assert.equal(stateJson(input), JSON.stringify(toState(input)), `seed ${seed}`);
    }
  });
});
