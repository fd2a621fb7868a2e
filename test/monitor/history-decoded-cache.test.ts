import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecodedCache, type DecodedFile } from '../../src/monitor/history/decoded-cache.js';

/**
 * The decoded-values cache's memory bound: a query decodes all its series into one buffer and
 * each series (and each file's entry of it) is a view, so the cache must count each buffer once,
 * whole, however many entries and files share it, and free it only when the last one goes.
 */

/** A file's cache entry holding the given views (dense steps). */
function entryOf(...views: Float64Array[]): DecodedFile {
  return {
    entryOf: new Map(views.map((_, e) => [e, e])),
    values: views,
    at: new Int32Array(views.length),
    count: Int32Array.from(views, (view) => view.length),
    firstStep: new Float64Array(views.length),
    steps: views.map(() => undefined),
    stepsAt: new Int32Array(views.length),
    baseStep: new Float64Array(views.length),
  };
}

describe('decoded cache', () => {
  it('counts a buffer shared by series and files once, whole, until its last holder goes', () => {
    const cache = new DecodedCache(10_000);
    const shared = new Float64Array(100); // 800 bytes, two series as views
    const first = shared.subarray(0, 60);
    const second = shared.subarray(60);
    cache.add('a.seg', entryOf(first, second));
    assert.equal(cache.byteLength, 800);
    cache.add('b.seg', entryOf(first.subarray(10, 20)));
    assert.equal(cache.byteLength, 800, 'a second file holding a view of the same buffer');
    const own = new Int32Array(25); // 100 bytes of stored steps
    const withSteps = entryOf(new Float64Array(25));
    withSteps.steps[0] = own;
    cache.add('c.seg', withSteps);
    assert.equal(cache.byteLength, 800 + 200 + 100);
    cache.dropFile('a.seg');
    assert.equal(cache.byteLength, 1100, 'b.seg still holds the shared buffer');
    cache.dropFile('b.seg');
    assert.equal(cache.byteLength, 300);
    cache.dropFile('c.seg');
    assert.equal(cache.byteLength, 0);
  });

  it('trims least recently used files until the whole buffers fit, keeping the query’s files', () => {
    const cache = new DecodedCache(1000);
    const old = new Float64Array(100); // 800 bytes
    cache.add('old-1.seg', entryOf(old.subarray(0, 50)));
    cache.add('old-2.seg', entryOf(old.subarray(50)));
    const fresh = new Float64Array(50); // 400 bytes
    cache.add('new.seg', entryOf(fresh));
    assert.equal(cache.byteLength, 1200);
    cache.fileOf('old-2.seg'); // used: old-1 is now the least recently used
    cache.trim(new Set(['new.seg']));
    // Dropping old-1 frees nothing (old-2 holds the buffer), so old-2 goes too.
    assert.equal(cache.byteLength, 400);
    assert.equal(cache.fileOf('old-1.seg'), undefined);
    assert.equal(cache.fileOf('old-2.seg'), undefined);
    assert.notEqual(cache.fileOf('new.seg'), undefined);
  });
});
