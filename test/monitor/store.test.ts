import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';

const NET_RX = METRIC_INDEX.get('net_rx')!;
const CPU_IDLE = METRIC_INDEX.get('cpu_idle')!;

/** Commits one snapshot at `timeMs` with `samples` ([interface, value] of net_rx). */
function commit(store: MetricStore, timeMs: number, samples: [string, number][]): void {
  const batch = new SampleBatch();
  for (const [name, value] of samples) batch.add(store.intern(NET_RX, [name]), value);
  store.commit(timeMs, batch);
}

/** Values of series `[name]` over the retained snapshots, oldest first (NaN = absent). */
function history(store: MetricStore, name: string): number[] {
  const id = store.seriesOf(NET_RX).find((candidate) => store.labelsOf(candidate)[0] === name);
  if (id === undefined) return [];
  const values: number[] = [];
  for (let seq = store.oldestSeq; seq <= store.newestSeq; seq++) values.push(store.value(id, seq));
  return values;
}

describe('MetricStore', () => {
  it('keeps the last `capacity` snapshots and wraps the ring', () => {
    const store = new MetricStore(3);
    assert.equal(store.snapshotCount, 0);
    for (let i = 0; i < 5; i++) commit(store, 1000 * i, [['lo', i * 10]]);
    assert.equal(store.snapshotCount, 3);
    assert.equal(store.newestSeq, 4);
    assert.equal(store.oldestSeq, 2);
    assert.deepEqual(
      [2, 3, 4].map((seq) => store.timeMs(seq)),
      [2000, 3000, 4000],
    );
    assert.deepEqual(history(store, 'lo'), [20, 30, 40]);
  });

  it('marks a series absent in snapshots it had no sample in', () => {
    const store = new MetricStore(4);
    commit(store, 0, [
      ['lo', 1],
      ['eth0', 2],
    ]);
    commit(store, 1000, [['lo', 3]]);
    commit(store, 2000, [
      ['lo', 5],
      ['eth0', 6],
    ]);
    assert.deepEqual(history(store, 'eth0'), [2, Number.NaN, 6]);
  });

  it('drops a series once it has no retained sample and reuses its id', () => {
    const store = new MetricStore(2);
    commit(store, 0, [
      ['gone', 1],
      ['lo', 1],
    ]);
    const goneId = store.seriesOf(NET_RX).find((id) => store.labelsOf(id)[0] === 'gone');
    commit(store, 1000, [['lo', 2]]);
    assert.equal(store.seriesCount, 2, 'still retained in the older snapshot');
    commit(store, 2000, [['lo', 3]]);
    assert.equal(store.seriesCount, 1);
    assert.deepEqual(
      store.seriesOf(NET_RX).map((id) => store.labelsOf(id)),
      [['lo']],
    );
    commit(store, 3000, [
      ['lo', 4],
      ['new', 7],
    ]);
    const newId = store.seriesOf(NET_RX).find((id) => store.labelsOf(id)[0] === 'new');
    assert.equal(newId, goneId, 'the freed row is reused');
    assert.deepEqual(history(store, 'new'), [Number.NaN, 7], 'a reused row starts empty');
  });

  it('drops a series interned without any committed sample', () => {
    const store = new MetricStore(5);
    store.intern(NET_RX, ['never']);
    commit(store, 0, [['lo', 1]]);
    assert.deepEqual(
      store.seriesOf(NET_RX).map((id) => store.labelsOf(id)[0]),
      ['lo'],
    );
  });

  it('does not keep NaN or infinities', () => {
    const store = new MetricStore(2);
    commit(store, 0, [
      ['a', Number.NaN],
      ['b', Number.POSITIVE_INFINITY],
      ['c', -1.5],
    ]);
    assert.deepEqual(
      store.seriesOf(NET_RX).map((id) => store.labelsOf(id)[0]),
      ['c'],
    );
  });

  it('orders the series of a metric by label values and copies the label array', () => {
    const store = new MetricStore(2);
    const labels = ['wlan0'];
    const batch = new SampleBatch();
    batch.add(store.intern(NET_RX, labels), 1);
    labels[0] = 'eth1';
    batch.add(store.intern(NET_RX, labels), 2);
    batch.add(store.intern(NET_RX, ['eth0']), 3);
    batch.add(store.intern(CPU_IDLE, []), 4);
    store.commit(0, batch);
    assert.deepEqual(
      store.seriesOf(NET_RX).map((id) => store.labelsOf(id)[0]),
      ['eth0', 'eth1', 'wlan0'],
    );
    assert.equal(store.seriesOf(CPU_IDLE).length, 1);
  });

  it('interns the same metric and labels to the same series, and different ones apart', () => {
    const store = new MetricStore(1);
    const restreamIo = METRIC_INDEX.get('restream_io')!;
    const a = store.intern(restreamIo, ['p', 'input', 'in', 'addr', '0', '0', 'video', 'fps']);
    const b = store.intern(restreamIo, ['p', 'input', 'in', 'addr', '0', '0', 'video', 'fps']);
    // Values that would collide if label values were joined with a separator.
    const c = store.intern(restreamIo, ['p|1:x', 'input', 'in', 'addr', '0', '0', 'video', 'fps']);
    const d = store.intern(restreamIo, ['p', '1:x|input', 'in', 'addr', '0', '0', 'video', 'fps']);
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.notEqual(c, d);
  });

  it('holds 10 000 series over many wraps without growing its value rows', () => {
    const store = new MetricStore(10);
    const batch = new SampleBatch();
    for (let tick = 0; tick < 30; tick++) {
      batch.clear();
      for (let i = 0; i < 10_000; i++) batch.add(store.intern(NET_RX, [`if${i}`]), tick);
      store.commit(tick * 1000, batch);
    }
    assert.equal(store.seriesCount, 10_000);
    // 8 bytes per slot, allocated in blocks of at most 1 MiB.
    assert.ok(store.valueBytes <= 10_000 * 10 * 8 + (1 << 20), `value rows hold ${store.valueBytes} bytes`);
  });
});
