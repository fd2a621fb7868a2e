import { randomInt } from 'node:crypto';

// Word lists for a readable instance name such as "quiet-river-4821" (docs/configuration.md).
const ADJECTIVES = [
  'amber',
  'bold',
  'calm',
  'brisk',
  'clear',
  'deep',
  'eager',
  'fair',
  'gentle',
  'golden',
  'keen',
  'lively',
  'mellow',
  'noble',
  'quiet',
  'rapid',
  'silent',
  'steady',
  'swift',
  'vivid',
];
const NOUNS = [
  'brook',
  'canyon',
  'cedar',
  'comet',
  'delta',
  'falcon',
  'field',
  'harbor',
  'island',
  'lake',
  'meadow',
  'orbit',
  'pine',
  'river',
  'signal',
  'spark',
  'stream',
  'summit',
  'valley',
  'wave',
];

/** A random, readable, URL-safe name: `<adjective>-<noun>-<4 digits>`. */
export function generateName(): string {
  const adjective = ADJECTIVES[randomInt(ADJECTIVES.length)] ?? 'quiet';
  const noun = NOUNS[randomInt(NOUNS.length)] ?? 'stream';
  return `${adjective}-${noun}-${String(randomInt(10_000)).padStart(4, '0')}`;
}
