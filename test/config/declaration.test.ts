import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import {
  DECLARED_KEYS,
  defaultConfig,
  getPath,
  isDeclaredKey,
  isPlainObject,
  KEYS,
  type IntRange,
  type KeyDeclaration,
} from '../../src/config/index.js';

const DOC = new URL('../../docs/configuration.md', import.meta.url);

/** The rows of the markdown table under `## <title>` (or `### <title>`), cells trimmed, header and rule left out. */
function tableRows(markdown: string, title: string): string[][] {
  const start = markdown.search(new RegExp(`^#{2,3} ${title}$`, 'm'));
  assert.ok(start >= 0, `docs/configuration.md has a "${title}" section`);
  const rows: string[][] = [];
  for (const line of markdown.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    if (!line.startsWith('|')) continue;
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
  }
  return rows.slice(2);
}

/** `` `a`, `b` `` → ['a', 'b']. */
function codeSpans(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
}

/** Leaf paths of a config object (arrays and the objects of `map` keys are values), in its key order. */
function leaves(object: Record<string, unknown>, prefix = ''): [string, unknown][] {
  return Object.entries(object).flatMap(([name, value]) => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    return isPlainObject(value) && !MAP_KEYS.has(path)
      ? leaves(value, path)
      : [[path, value] as [string, unknown]];
  });
}

const DECLARATIONS = Object.entries(DECLARED_KEYS as Record<string, KeyDeclaration>);
const MAP_KEYS = new Set(KEYS.filter((key) => key.kind === 'map').map((key) => key.path));

describe('config: every key declared once (src/config/keys.ts)', () => {
  it('derives defaultConfig() from the declarations: the same keys, in order, with the declared defaults', () => {
    const derived = leaves(defaultConfig());
    assert.deepEqual(
      derived.map(([path]) => path),
      KEYS.map((key) => key.path),
    );
    for (const key of KEYS) assert.deepEqual(getPath(defaultConfig(), key.path), key.default, key.path);
  });

  it('hands out a fresh copy of the defaults each time (a list changed in one config is not in the next)', () => {
    const first = defaultConfig();
    first.sessions.ip_ignorelist.push('192.0.2.0/24');
    first.api.auth.auth0.tenants.push({ domain: 'd', audience: 'a', clientid: 'c', users: [] });
    const second = defaultConfig();
    assert.deepEqual(second.sessions.ip_ignorelist, ['127.0.0.1/32', '::1/128']);
    assert.deepEqual(second.api.auth.auth0.tenants, []);
    for (const key of KEYS) assert.deepEqual(getPath(second, key.path), key.default, key.path);
  });

  it("declares each key's default of its kind, integers inside their bounds", () => {
    for (const [path, declaration] of DECLARATIONS) {
      if (!isDeclaredKey(declaration)) continue;
      const value = declaration.default;
      switch (declaration.kind) {
        case 'bool':
          assert.equal(typeof value, 'boolean', path);
          break;
        case 'int':
          assert.ok(Number.isSafeInteger(value), path);
          assert.ok(declaration.range !== undefined, `${path} has bounds`);
          assert.ok(
            (value as number) >= declaration.range.min && (value as number) <= declaration.range.max,
            path,
          );
          break;
        case 'string':
          assert.equal(typeof value, 'string', path);
          if (declaration.choices !== undefined)
            assert.ok(declaration.choices.includes(value as string), path);
          break;
        case 'map':
          assert.ok(isPlainObject(value), path);
          assert.ok(
            Object.values(value as object).every((item) => typeof item === 'string'),
            path,
          );
          break;
        default:
          assert.ok(Array.isArray(value), path);
      }
    }
  });
});

describe('docs/configuration.md lists every declared key', () => {
  it('has a row in "Keys" for each key, with exactly its env vars, and none for a key not declared', async () => {
    const rows = tableRows(await readFile(DOC, 'utf8'), 'Keys');
    const documented = new Map(
      rows.map((row) => [codeSpans(row[0] ?? '')[0] ?? '', codeSpans(row[1] ?? '')]),
    );
    for (const key of KEYS) {
      assert.deepEqual(documented.get(key.path), [...key.env], `${key.path}: its row names its env vars`);
    }
    const declared = new Set(KEYS.map((key) => key.path));
    for (const path of documented.keys())
      assert.ok(declared.has(path), `${path} is documented but not declared`);
  });

  it('has a row in "Bounds" for each integer, with its min, max and why, the v16-only ones marked', async () => {
    const rows = tableRows(await readFile(DOC, 'utf8'), 'Bounds');
    const documented = new Map(
      rows.map((row) => [
        row[0] ?? '',
        { min: Number(row[1]), max: Number(row[2]), why: row[3] ?? '' } satisfies IntRange,
      ]),
    );
    const expected = new Map<string, IntRange>();
    for (const [path, declaration] of DECLARATIONS) {
      if (declaration.range === undefined) continue;
      const label = isDeclaredKey(declaration) ? `\`${path}\`` : `\`${path}\` (v16, stored only)`;
      expected.set(label, declaration.range);
    }
    assert.deepEqual(new Map([...documented].sort()), new Map([...expected].sort()));
  });
});
