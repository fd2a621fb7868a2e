import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { candidatesOf, placingOf } from '../../src/cluster/candidates.js';
import type { NodeRecord } from '../../src/cluster/keys.js';
import { NodeTenure } from '../../src/cluster/node-tenure.js';
import { placeProcess, type ReferencePlacement } from '../../src/cluster/placement.js';
import { ProcessGroups } from '../../src/cluster/process-links.js';
import { atRest, rebalanceMoves } from '../../src/cluster/rebalance.js';
import { emptySnapshot, type ClusterSnapshot } from '../../src/cluster/view.js';

// The rules on literal pictures of a cluster; test/cluster/placement.test.ts runs them on real nodes.

function node(id: string, ncpu = 2, maxProcesses = 0): NodeRecord & { createRevision: number } {
  const resources = { ncpu, cpuUsage: 0, memTotalBytes: 0, memUsedBytes: 0, encoders: 0, maxProcesses };
  return { id, address: `http://${id}`, updatedAt: 0, resources, createRevision: 1 };
}

interface Stored {
  id: string;
  on: string;
  reference?: string;
  reads?: string;
  running?: boolean;
}

/** A picture with `nodes` and the processes `stored`, each assigned (settled) to its node. */
function picture(nodes: NodeRecord[], stored: Stored[]): ClusterSnapshot {
  const snapshot = emptySnapshot();
  for (const record of nodes) snapshot.nodes.set(record.id, { ...record, createRevision: 1 });
  for (const [index, process] of stored.entries()) {
    const input = process.reads === undefined ? 'testsrc' : `#${process.reads}:output=out`;
    const config = {
      id: process.id,
      reference: process.reference ?? '',
      input: [{ id: 'in', address: input }],
    };
    const document = {
      id: process.id,
      reference: process.reference ?? '',
      config,
      created_at: index,
      updated_at: index,
      order: process.running === false ? 'stop' : 'start',
      metadata: {},
    };
    snapshot.processes.set(process.id, { value: document, modRevision: index + 1 });
    snapshot.assignments.set(process.id, { value: { node: process.on }, modRevision: index + 1 });
  }
  return snapshot;
}

/** Applies rebalancing waves until none moves anything; every move, in order. */
function rebalanceUntilQuiet(snapshot: ClusterSnapshot, rule: ReferencePlacement = 'load') {
  const moves = [];
  for (let wave = 0; wave < 100; wave++) {
    assert.ok(atRest(snapshot));
    const next = rebalanceMoves(snapshot, candidatesOf(snapshot), new ProcessGroups(snapshot), rule, 2);
    if (next.length === 0) return moves;
    for (const move of next) snapshot.assignments.set(move.id, { value: { node: move.to }, modRevision: 0 });
    moves.push(...next);
  }
  throw new Error('rebalancing does not end');
}

function perNode(snapshot: ClusterSnapshot): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const id of snapshot.nodes.keys()) counts[id] = 0;
  for (const { value } of snapshot.assignments.values()) counts[value.node] = (counts[value.node] ?? 0) + 1;
  return counts;
}

describe('placement rules', () => {
  const show = (on: string, id: string): Stored => ({ id, on, reference: 'show' });

  it('spreads or gathers a reference before looking at the load, only where there is room', () => {
    const nodes = [node('a'), node('b'), node('c', 2, 2)];
    const snapshot = picture(nodes, [
      show('a', 's0'),
      { id: 'x0', on: 'b' },
      { id: 'x1', on: 'b' },
      show('c', 's1'),
    ]);
    const candidates = [...candidatesOf(snapshot).values()];
    const placing = { cpuLimit: 0, reference: 'show' };
    assert.equal(placeProcess(candidates, placing, 'load'), 'a');
    assert.equal(placeProcess(candidates, placing, 'spread'), 'b');
    assert.equal(placeProcess(candidates, placing, 'together'), 'a');
    // c is full (ffmpeg.max_processes 2): spread takes the next best.
    const full = picture(nodes, [
      show('a', 's0'),
      show('b', 's1'),
      { id: 'x', on: 'c' },
      { id: 'y', on: 'c' },
    ]);
    assert.equal(placeProcess([...candidatesOf(full).values()], placing, 'spread'), 'a');
  });

  it('evens out the processes per CPU in waves of two, leaves a difference of one alone, and never moves one back', () => {
    const stored: Stored[] = [];
    for (let index = 0; index < 7; index++) stored.push({ id: `b${index}`, on: 'b' });
    for (let index = 0; index < 6; index++) stored.push({ id: `c${index}`, on: 'c' });
    const snapshot = picture([node('a'), node('b'), node('c')], stored);
    const moves = rebalanceUntilQuiet(snapshot);
    assert.deepEqual(perNode(snapshot), { a: 4, b: 5, c: 4 });
    assert.equal(moves.length, 4);
    assert.ok(moves.every((move) => move.to === 'a'));
    assert.equal(new Set(moves.map((move) => move.id)).size, moves.length);
    // A node with twice the CPUs takes twice the processes; nothing moves between equals.
    const wide = picture([node('a', 4), node('b')], stored.slice(0, 6));
    rebalanceUntilQuiet(wide);
    assert.deepEqual(perNode(wide), { a: 4, b: 2 });
    assert.deepEqual(rebalanceUntilQuiet(picture([node('a'), node('b')], [{ id: 'x', on: 'a' }])), []);
  });

  it('moves stopped processes first, and neither linked processes nor one that would gather its reference', () => {
    const snapshot = picture(
      [node('a'), node('b')],
      [
        { id: 'src', on: 'b' },
        { id: 'reader', on: 'b', reads: 'src' },
        show('b', 's0'),
        show('a', 's1'),
        { id: 'running', on: 'b' },
        { id: 'stopped', on: 'b', running: false },
      ],
    );
    const moves = rebalanceMoves(snapshot, candidatesOf(snapshot), new ProcessGroups(snapshot), 'spread', 2);
    assert.deepEqual(
      moves.map((move) => move.id),
      ['stopped', 'running'],
    );
    assert.equal(placingOf(snapshot, 's0').reference, 'show');
    assert.deepEqual(new ProcessGroups(snapshot).companions('reader'), ['src']);
  });

  it('gives processes only to nodes registered for a while (under the same lease)', () => {
    let now = 0;
    const tenure = new NodeTenure(() => now);
    const snapshot = picture(
      [node('a'), node('b')],
      [
        { id: 'x', on: 'b' },
        { id: 'y', on: 'b' },
      ],
    );
    const moves = () =>
      rebalanceMoves(
        snapshot,
        candidatesOf(snapshot),
        new ProcessGroups(snapshot),
        'load',
        2,
        tenure.steady(snapshot, 8000),
      );
    assert.deepEqual(moves(), []);
    now = 8000;
    assert.deepEqual(moves(), [{ id: 'y', from: 'b', to: 'a' }]);
    // a restarted (a new lease, a new registration): it waits again.
    snapshot.nodes.set('a', { ...node('a'), createRevision: 7 });
    assert.deepEqual(moves(), []);
    now = 16_000;
    assert.equal(moves().length, 1);
  });

  it('does not rebalance while a move is under way or a process has no node', () => {
    const snapshot = picture([node('a'), node('b')], [{ id: 'x', on: 'b' }]);
    snapshot.assignments.set('x', { value: { node: 'a', after: 'b' }, modRevision: 2 });
    assert.equal(atRest(snapshot), false);
    snapshot.assignments.delete('x');
    assert.equal(atRest(snapshot), false);
  });
});
