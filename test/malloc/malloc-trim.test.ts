// test-alone: it measures this process's RSS
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadMallocTrimAddon, MallocTrimmer, type MallocTrimAddon } from '../../src/malloc/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function rssBytes(): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return Number(match![1]) * 1024;
}

/** The addon as `npm ci` builds it (build:malloc-trim); glibc on the machines the tests run on. */
function addon(): MallocTrimAddon {
  const loaded = loadMallocTrimAddon();
  assert.ok('addon' in loaded, 'reason' in loaded ? loaded.reason : '');
  assert.equal(loaded.addon.available, true);
  return loaded.addon;
}

describe('malloc trim (native/malloc-trim)', () => {
  it('gives the pages of freed Buffers below a live one back to the kernel', async () => {
    const { trim } = addon();
    // 100 KiB blocks stay under glibc's mmap threshold (128 KiB at start): they are carved from
    // the main arena, and the last one keeps the freed ones from being the arena's top.
    let blocks: Buffer[] | undefined = Array.from({ length: 400 }, () => Buffer.alloc(100 << 10, 1));
    const pin = Buffer.alloc(100 << 10, 2);
    blocks = undefined;
    let before = 0;
    let released = false;
    // V8 frees dead Buffers' memory on a background thread after the collection: try a few times.
    for (let attempt = 0; attempt < 20 && !released; attempt++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
      before = rssBytes();
      released = trim();
    }
    assert.equal(blocks, undefined);
    assert.ok(released, 'malloc_trim released nothing');
    const after = rssBytes();
    assert.ok(before - after >= 20 << 20, `RSS ${before} → ${after} bytes`);
    assert.equal(pin[0], 2);
  });

  it('pins the thresholds to sizes glibc accepts only', () => {
    const { pinThresholds } = addon();
    assert.equal(pinThresholds(128 << 10), true);
    assert.equal(pinThresholds(0), false);
    assert.equal(pinThresholds(2 ** 40), false);
  });

  it('says why when the addon is not there', () => {
    const loaded = loadMallocTrimAddon(join(import.meta.dirname, 'no-such-addon.node'));
    assert.ok('reason' in loaded);
    assert.match(loaded.reason, /not built/);
  });

  it('trims on its interval until stopped', async () => {
    const trimmer = new MallocTrimmer(addon(), 10);
    trimmer.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    trimmer.stop();
    const calls = trimmer.callCount;
    assert.ok(calls >= 3, `${calls} calls in 200 ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(trimmer.callCount, calls);
  });
});
