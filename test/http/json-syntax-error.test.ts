import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeJsonSyntaxError, findJsonSyntaxError } from '../../src/http/json-syntax-error.js';

describe('findJsonSyntaxError', () => {
  const cases: [string, string][] = [
    ['{"a":[}', "unexpected '}' where a value was expected at line 1, column 7 (character 6)"],
    ['{"a":', 'unexpected end of input at line 1, column 6 (character 5)'],
    ['{"a" 1}', "expected ':' after the property name, found '1' at line 1, column 6 (character 5)"],
    ['[1,]', "unexpected ']' where a value was expected at line 1, column 4 (character 3)"],
    ['{"a":1,}', "expected a property name in double quotes, found '}' at line 1, column 8 (character 7)"],
    ['{"a":1}x', "unexpected 'x' after the JSON value at line 1, column 8 (character 7)"],
    ['{"a":\n  [1 2]}', "expected ',' or ']', found '2' at line 2, column 6 (character 11)"],
    ['"abc', 'unterminated string at line 1, column 5 (character 4)'],
    ['"\\u12g4"', 'bad \\u escape: four hex digits expected at line 1, column 2 (character 1)'],
    ['"a\u0001"', 'control character in a string (escape it) at line 1, column 3 (character 2)'],
    ['', 'unexpected end of input at line 1, column 1 (character 0)'],
  ];
  for (const [text, detail] of cases) {
    it(`describes ${JSON.stringify(text)}`, () => {
      assert.throws(() => JSON.parse(text) as unknown);
      assert.equal(describeJsonSyntaxError(text, 'parser message'), detail);
    });
  }

  it('finds nothing wrong in valid JSON, trailing newline included', () => {
    for (const text of [
      '{"a":1}\n',
      ' [1, -2.5e3, 0, "s\\u00e9\\n", true, false, null, {}, []] ',
      '"x"',
      '-0',
    ]) {
      assert.equal(findJsonSyntaxError(text), undefined, text);
    }
  });

  it('copes with nesting as deep as a whole body allows, without recursion', () => {
    const deep = '['.repeat(65_536);
    assert.equal(findJsonSyntaxError(deep)?.offset, 65_536);
  });

  it('agrees with JSON.parse on thousands of mutated documents', () => {
    const seed =
      '{"timerange_sec": 60, "metrics": [{"name": "cpu_idle", "labels": {"a": "^x\\"y$"}}, null, -1.5e-3]}';
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      '-',
      '.',
      'e',
      '0',
      '1',
      ' ',
      '\n',
      'n',
      't',
      'x',
    ];
    let state = 12_345;
    const random = (below: number): number => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state % below;
    };
    for (let round = 0; round < 5_000; round++) {
      const chars = [...seed];
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(chars.length + 1);
        const kind = random(3);
        if (kind === 0) chars.splice(at, 1);
        else if (kind === 1) chars.splice(at, 0, alphabet[random(alphabet.length)] ?? '');
        else chars[at] = alphabet[random(alphabet.length)] ?? '';
      }
      const text = chars.join('');
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      assert.equal(findJsonSyntaxError(text) === undefined, valid, text);
    }
  });
});
