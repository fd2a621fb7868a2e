import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RE2JS } from 're2js';
import { LabelPattern } from '../../src/monitor/query/label-pattern.js';

/**
 * A label pattern remembers its answer per value (label-pattern.ts); every answer, first or
 * remembered, before and after the memory starts over, must be the automaton's own.
 */
describe('LabelPattern', () => {
  const sources = ['', '^eth', 'lo', '.', '^/', 'mem', 'disk', '^(a|b)', 'e', '[0-9]+$', '^$', 'sd|wl'];
  /** More distinct values than one pattern keeps, so the kept answers are dropped and rebuilt. */
  const values = Array.from({ length: 700 }, (_, i) => {
    const stems = ['eth', 'lo', '/dev/sda', 'mem', 'disk', 'a', 'b', '', 'wlan', '/'];
    return `${stems[i % stems.length]}${i % 3 === 0 ? '' : String(i)}`;
  });

  it('answers as the compiled RE2 pattern for every value, asked many times in random order', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const source of sources) {
      const regexp = RE2JS.compile(source);
      const pattern = new LabelPattern(RE2JS.compile(source));
      let matched = 0;
      for (let ask = 0; ask < 5000; ask++) {
        const value = values[Math.floor(random() * values.length)]!;
        const expected = regexp.test(value);
        assert.equal(pattern.test(value), expected, `${JSON.stringify(source)} on ${JSON.stringify(value)}`);
        if (expected) matched++;
      }
      // The values are chosen so that every pattern matches some of them.
      assert.ok(matched > 0, `${source} matched nothing`);
    }
  });
});
