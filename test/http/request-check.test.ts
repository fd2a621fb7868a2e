import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from 'typebox';
import { Given, RequestCheck } from '../../src/http/index.js';

const Body = Type.Object({
  name: Given(Type.String()),
  count: Given(Type.Integer({ minimum: 0 })),
  share: Type.Optional(Type.Number({ minimum: 0 })),
  ratio: Type.Optional(Type.Number()),
  tags: Given(Type.Array(Type.String())),
  items: Given(
    Type.Array(
      Type.Object({
        on: Given(Type.Boolean()),
        parts: Type.Optional(Type.Array(Type.Object({ id: Type.String() }))),
      }),
    ),
  ),
  mode: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  key: Type.String(),
});

describe('request check: a request part against its schema, in the v16 details', () => {
  const check = new RequestCheck(Body, 'body');

  it('accepts a matching part, null meaning "not given", unknown fields included', () => {
    assert.deepEqual(check.problems({ key: 'k', name: null, tags: null, other: [1] }), []);
    const read = check.read({ key: 'k', count: 3 });
    assert.equal(read.value?.count, 3);
  });

  it('names the root, in its own name', () => {
    assert.deepEqual(check.problems([]), ['body: must be a JSON object']);
    assert.deepEqual(new RequestCheck(Body, 'query').problems('x'), ['query: must be a JSON object']);
  });

  it('names every field, in schema order, worded by what the schema expects', () => {
    assert.deepEqual(
      check.problems({
        key: 1,
        tags: ['a', 2, 3],
        count: 1.5,
        name: 5,
        share: -1,
        ratio: 'x',
        items: [{ on: 'yes', parts: [{ id: 1 }, 'x'] }, 4],
      }),
      [
        'name: must be a string',
        'count: must be a non-negative integer',
        'share: must be a non-negative number',
        'ratio: must be a number',
        'tags: must be an array of strings',
        'items[0].on: must be a boolean',
        'items[0].parts[0].id: must be a string',
        'items[0].parts[1]: must be an object',
        'items[1]: must be an object',
        'key: must be a string',
      ],
    );
  });

  it('names a missing required field, and an array of objects that is not an array', () => {
    assert.deepEqual(check.problems({ items: {} }), [
      'items: must be an array of objects',
      'key: is required',
    ]);
  });

  it('names the choices of a union of constants', () => {
    assert.deepEqual(check.problems({ key: 'k', mode: 'c' }), ['mode: must be one of "a", "b"']);
  });
});
