import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkBasicAuth, parseBasicAuth } from '../../src/storage/basic-auth.js';
import { compileGlob } from '../../src/storage/glob.js';
import { parseRange } from '../../src/storage/http-range.js';
import { decodeFilePath, normalizeFilePath } from '../../src/storage/path.js';

describe('normalizeFilePath / decodeFilePath', () => {
  const cases: [string, string | undefined][] = [
    ['/a/b.ts', '/a/b.ts'],
    ['a/b.ts', '/a/b.ts'],
    ['//a///b.ts', '/a/b.ts'],
    ['/a/./b.ts', '/a/b.ts'],
    ['/dir/', '/dir/'],
    ['/', '/'],
    ['', '/'],
    ['/../etc/passwd', undefined],
    ['/a/../../b', undefined],
    ['/a/..', undefined],
    ['..', undefined],
    ['/a\0b', undefined],
    ['/..foo/b', '/..foo/b'],
  ];
  for (const [input, expected] of cases) {
    it(`normalizes ${JSON.stringify(input)}`, () => assert.equal(normalizeFilePath(input), expected));
  }
  it('decodes once: %2e%2e is .., %252e%252e stays a literal name', () => {
    assert.equal(decodeFilePath('/%2e%2e/etc/passwd'), undefined);
    assert.equal(decodeFilePath('/%2E%2E%2Fetc'), undefined);
    assert.equal(decodeFilePath('/%252e%252e/x'), '/%2e%2e/x');
    assert.equal(decodeFilePath('/a%20b.ts'), '/a b.ts');
    assert.equal(decodeFilePath('/%zz'), undefined);
    assert.equal(decodeFilePath('/a%00b'), undefined);
  });
});

describe('compileGlob', () => {
  const cases: [string, string, boolean][] = [
    ['/*.ts', '/a.ts', true],
    ['/*.ts', '/dir/a.ts', false],
    ['/**.ts', '/dir/a.ts', true],
    ['/**/*.ts', '/a.ts', true],
    ['/**/*.ts', '/x/y/a.ts', true],
    ['/cam1_*.ts', '/cam1_0001.ts', true],
    ['/cam1_*.ts', '/cam2_0001.ts', false],
    ['/cam?.m3u8', '/cam1.m3u8', true],
    ['/cam?.m3u8', '/cam12.m3u8', false],
    ['/cam[12].ts', '/cam2.ts', true],
    ['/cam[!12].ts', '/cam2.ts', false],
    ['/*.{ts,m3u8}', '/a.m3u8', true],
    ['/*.{ts,m3u8}', '/a.mp4', false],
    ['/a.b', '/aXb', false],
    ['/a(b)+', '/a(b)+', true],
  ];
  for (const [pattern, path, expected] of cases) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} ${path}`, () =>
      assert.equal(compileGlob(pattern).matches(path), expected));
  }
  it('stays linear on a pathological pattern', () => {
    const glob = compileGlob(`/${'*a'.repeat(30)}b`);
    assert.equal(glob.matches(`/${'a'.repeat(5000)}`), false);
  });
});

describe('parseRange', () => {
  it('parses the three forms', () => {
    assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
    assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
    assert.deepEqual(parseRange('bytes=-500', 100), { start: 0, end: 99 });
    assert.deepEqual(parseRange('bytes=50-500', 100), { start: 50, end: 99 });
  });
  it('ignores what it does not serve', () => {
    assert.equal(parseRange(undefined, 100), undefined);
    assert.equal(parseRange('items=0-9', 100), undefined);
    assert.equal(parseRange('bytes=0-1,5-6', 100), undefined);
    assert.equal(parseRange('bytes=9-2', 100), undefined);
    assert.equal(parseRange('bytes=-', 100), undefined);
  });
  it('reports ranges outside the file', () => {
    assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 100), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
  });
});

describe('basic auth', () => {
  const header = (text: string): string => `Basic ${Buffer.from(text).toString('base64')}`;
  it('parses user and password (the password may contain colons)', () => {
    assert.deepEqual(parseBasicAuth(header('admin:p:w')), { username: 'admin', password: 'p:w' });
    assert.equal(parseBasicAuth('Bearer abc'), undefined);
    assert.equal(parseBasicAuth(header('nocolon')), undefined);
  });
  it('accepts only the exact credentials', () => {
    const expected = { username: 'admin', password: 'secret' };
    assert.equal(checkBasicAuth(header('admin:secret'), expected), true);
    assert.equal(checkBasicAuth(header('admin:secreT'), expected), false);
    assert.equal(checkBasicAuth(header('Admin:secret'), expected), false);
    assert.equal(checkBasicAuth(header('admin:'), expected), false);
    assert.equal(checkBasicAuth(undefined, expected), false);
  });
});
