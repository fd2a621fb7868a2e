import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BlockArena } from '../../src/monitor/query/block-arena.js';

/** The memory of a snapshot's blocks, reused for the next snapshot's (block-arena.ts). */
describe('BlockArena', () => {
  it('hands out views that never overlap within a round, of exactly the asked length', () => {
    const arena = new BlockArena(8 << 20);
    const views = [0, 1, 7, 4096, 100_000, 200_000, 3, 150_000].map((length, i) => {
      const view = arena.allocate(length);
      assert.equal(view.length, length);
      view.fill(i + 1);
      return view;
    });
    views.forEach((view, i) =>
      assert.ok(
        view.every((byte) => byte === i + 1),
        `view ${i} kept its bytes`,
      ),
    );
  });

  it('reuses the last round’s memory after a reset, and lets go of chunks a round did not need', () => {
    const arena = new BlockArena(8 << 20);
    const first = arena.allocate(1000);
    for (let i = 0; i < 10; i++) arena.allocate(200_000);
    const held = arena.heldBytes;
    assert.ok(held >= 2_000_000, `held ${held}`);
    arena.reset();
    const again = arena.allocate(1000);
    assert.equal(again.buffer, first.buffer, 'the same chunk');
    assert.equal(again.byteOffset, first.byteOffset);
    arena.reset();
    assert.ok(arena.heldBytes < held, 'a round of one small block keeps one chunk');
    arena.reset();
    assert.equal(arena.heldBytes, 0, 'an empty round keeps nothing');
  });

  it('gives plain buffers past its bound per round and for blocks larger than a chunk', () => {
    const arena = new BlockArena(300_000);
    const inArena = arena.allocate(250_000);
    const over = arena.allocate(100_000);
    const large = arena.allocate(1 << 20);
    assert.equal(arena.heldBytes, 256 << 10, 'one chunk only');
    assert.notEqual(over.buffer, inArena.buffer);
    assert.notEqual(large.buffer, inArena.buffer);
    assert.equal(large.length, 1 << 20);
  });
});
