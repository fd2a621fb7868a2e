import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eachBounded } from '../../src/cluster/bounded.js';
import { plan } from '../../src/cluster/reconcile.js';
import { SoonerReads } from '../../src/cluster/sooner-reads.js';
import { emptySnapshot, type ClusterSnapshot } from '../../src/cluster/view.js';

// How a node takes over what the leader assigns it, on literals; test/cluster/cluster.test.ts
// runs it on real nodes with a /proc census of the encoders.

/** A deferred step per item, released by the test, and a record of what ran when. */
function gatedWork() {
  const running = new Set<number>();
  const started: number[] = [];
  const gates = new Map<number, () => void>();
  let most = 0;
  const work = async (item: number): Promise<void> => {
    started.push(item);
    running.add(item);
    most = Math.max(most, running.size);
    await new Promise<void>((resolve) => gates.set(item, resolve));
    running.delete(item);
  };
  const release = async (item: number): Promise<void> => {
    gates.get(item)?.();
    // Let the lane that ran it take its next item.
    for (let turn = 0; turn < 5; turn++) await Promise.resolve();
  };
  return { work, release, started, running, most: () => most };
}

describe('taking over many processes', () => {
  it('starts a bounded number at once, the next as soon as one is done, in order', async () => {
    const items = Array.from({ length: 20 }, (_, index) => index);
    const gated = gatedWork();
    let finished = false;
    const all = eachBounded(items, 4, gated.work).then(() => (finished = true));
    await Promise.resolve();
    assert.deepEqual(gated.started, [0, 1, 2, 3], 'four at once, not one after the other');
    await gated.release(2);
    assert.deepEqual(gated.started, [0, 1, 2, 3, 4]);
    for (const item of items) await gated.release(item);
    await all;
    assert.equal(finished, true);
    assert.equal(gated.most(), 4);
    assert.deepEqual(gated.started, items);
  });

  it('starts none once the fence says no, and waits for those under way', async () => {
    const gated = gatedWork();
    let fenceHolds = true;
    let finished = false;
    const all = eachBounded([0, 1, 2, 3, 4, 5], 2, gated.work, () => fenceHolds).then(
      () => (finished = true),
    );
    await Promise.resolve();
    fenceHolds = false;
    await gated.release(0);
    assert.deepEqual(gated.started, [0, 1], 'nothing started after the fence closed');
    assert.equal(finished, false, 'the one under way is waited for');
    await gated.release(1);
    await all;
    assert.deepEqual(gated.started, [0, 1]);
  });

  it('adopts the processes that read another one in a later wave, and releases what it let go', () => {
    const snapshot: ClusterSnapshot = emptySnapshot();
    const stored = (id: string, input: string): void => {
      const config = { id, reference: '', input: [{ id: 'in', address: input }] };
      snapshot.processes.set(id, {
        value: { id, reference: '', config, created_at: 0, updated_at: 0, order: 'start', metadata: {} },
        modRevision: 1,
      });
    };
    const assign = (id: string, node: string, after?: string): void => {
      snapshot.assignments.set(id, {
        value: { node, ...(after === undefined ? {} : { after }) },
        modRevision: 1,
      });
    };
    stored('reader', '#source:output=out');
    assign('reader', 'me');
    stored('source', 'testsrc');
    assign('source', 'me');
    stored('plain', 'testsrc');
    assign('plain', 'me');
    stored('running-here', 'testsrc');
    assign('running-here', 'me');
    stored('writing', 'testsrc');
    assign('writing', 'me');
    stored('elsewhere', 'testsrc');
    assign('elsewhere', 'other');
    stored('arriving', 'testsrc');
    assign('arriving', 'me', 'other');
    stored('left', 'testsrc');
    assign('left', 'other', 'me');
    stored('leaving', 'testsrc');
    assign('leaving', 'other', 'me');
    assign('never-stored', 'me');

    const { waves, releases } = plan(
      snapshot,
      'me',
      new Set(['running-here', 'leaving']),
      new Set(['writing']),
    );

    assert.deepEqual(waves, [['source', 'plain'], ['reader']]);
    assert.deepEqual(
      releases.map(([id]) => id),
      ['left'],
    );
  });
});

describe('reading again while a failover is under way', () => {
  const registered = (snapshot: ClusterSnapshot, id: string, updatedAt = 0): void => {
    const resources = {
      ncpu: 2,
      cpuUsage: 0,
      memTotalBytes: 0,
      memUsedBytes: 0,
      encoders: 0,
      maxProcesses: 0,
    };
    snapshot.nodes.set(id, { id, address: `http://${id}`, updatedAt, resources, createRevision: 1 });
  };

  it('reads sooner while a process is assigned to a node that is gone, for at most the window', () => {
    let now = 0;
    const sooner = new SoonerReads(Infinity, 8000, () => now);
    const snapshot = emptySnapshot();
    registered(snapshot, 'b');
    registered(snapshot, 'c');
    snapshot.assignments.set('p', { value: { node: 'b' }, modRevision: 1 });
    snapshot.assignments.set('q', { value: { node: 'c', after: 'b' }, modRevision: 1 });
    assert.equal(sooner.wanted(snapshot), false, 'every node is there: the periodic read suffices');

    snapshot.nodes.delete('b');
    now = 1000;
    assert.equal(sooner.wanted(snapshot), true, "b's lease expired: its processes are about to move");
    now = 8999;
    assert.equal(sooner.wanted(snapshot), true);
    now = 9000;
    assert.equal(sooner.wanted(snapshot), false, 'moves that do not come do not keep the node reading');

    snapshot.assignments.set('p', { value: { node: 'c' }, modRevision: 2 });
    snapshot.assignments.set('q', { value: { node: 'c' }, modRevision: 2 });
    assert.equal(sooner.wanted(snapshot), false, 'all moved');

    snapshot.nodes.delete('c');
    now = 20_000;
    assert.equal(sooner.wanted(snapshot), true, 'the next failover has a window of its own');
  });

  it('reads sooner while a node has not written its registration for a while, for at most the window', () => {
    let now = 0;
    const sooner = new SoonerReads(2500, 8000, () => now);
    const snapshot = emptySnapshot();
    registered(snapshot, 'b', 1);
    registered(snapshot, 'c', 1);
    assert.equal(sooner.wanted(snapshot), false);
    now = 2000;
    registered(snapshot, 'b', 2);
    registered(snapshot, 'c', 2);
    assert.equal(sooner.wanted(snapshot), false, 'both write every second');
    now = 4000;
    registered(snapshot, 'b', 4);
    assert.equal(sooner.wanted(snapshot), false, "c's last write was seen 2 s ago");
    now = 4500;
    assert.equal(sooner.wanted(snapshot), true, 'c has not written for 2.5 s: it may be dead');
    now = 12_499;
    registered(snapshot, 'b', 12);
    assert.equal(sooner.wanted(snapshot), true);
    now = 12_500;
    assert.equal(
      sooner.wanted(snapshot),
      false,
      'a node that is slow but alive does not keep the others reading',
    );
    snapshot.nodes.delete('c');
    assert.equal(sooner.wanted(snapshot), false, 'gone, with nothing assigned to it: nothing to wait for');
  });
});
