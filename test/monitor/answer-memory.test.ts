import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EncodedBody } from '../../src/http/index.js';
import { MetricsQueryService, parseMetricsQuery } from '../../src/monitor/query/index.js';
import { AnswerBuffers, MIN_POOLED_BYTES } from '../../src/monitor/query/answer-buffers.js';
import { PatternCache } from '../../src/monitor/query/pattern-cache.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';
import { LIMITS } from '../helpers/query-limits.js';
import { evaluatePlainly } from './support/plain-evaluation.js';

describe('answer buffers', () => {
  it('hands out exactly the asked length, and a released block again for a similar size', () => {
    const buffers = new AnswerBuffers();
    const first = buffers.acquire(200_000);
    assert.equal(first.length, 200_000);
    buffers.release(first);
    const second = buffers.acquire(190_000);
    assert.equal(second.length, 190_000);
    assert.equal(second.buffer, first.buffer, 'the released block');
    assert.equal(buffers.keptBytes, 0);
  });

  it('never hands one block to two holders', () => {
    const buffers = new AnswerBuffers();
    const a = buffers.acquire(100_000);
    const b = buffers.acquire(100_000);
    assert.notEqual(a.buffer, b.buffer, 'both held: two blocks');
    buffers.release(a);
    buffers.release(a);
    const c = buffers.acquire(100_000);
    const d = buffers.acquire(100_000);
    assert.equal(c.buffer, a.buffer);
    assert.notEqual(d.buffer, a.buffer, 'released twice, kept once');
  });

  it('keeps no small buffers, and no block for an answer under half its size', () => {
    const buffers = new AnswerBuffers();
    const small = buffers.acquire(MIN_POOLED_BYTES - 1);
    buffers.release(small);
    assert.equal(buffers.keptBytes, 0);
    const big = buffers.acquire(1_000_000);
    buffers.release(big);
    assert.notEqual(buffers.acquire(100_000).buffer, big.buffer);
    assert.equal(buffers.acquire(900_000).buffer, big.buffer);
  });

  it('keeps at most a bounded number of free bytes', () => {
    const buffers = new AnswerBuffers();
    const held = Array.from({ length: 40 }, () => buffers.acquire(500_000));
    for (const buffer of held) buffers.release(buffer);
    assert.ok(buffers.keptBytes > 0);
    assert.ok(buffers.keptBytes <= 2 << 20, `${buffers.keptBytes} bytes kept`);
  });
});

/**
 * 200 series of 150 points: a series answer is ~0.6 MB, so the per-snapshot cache (2 MiB) keeps the
 * first three ranges asked and the later ones are made per request.
 */
function bigStore(): MetricStore {
  const store = new MetricStore(150);
  const netRx = METRIC_INDEX.get('net_rx')!;
  const ids = Array.from({ length: 200 }, (_, i) => store.intern(netRx, [`if${i}`]));
  for (let t = 0; t < 150; t++) {
    const batch = new SampleBatch();
    for (const id of ids) batch.add(id, t * 1000 + id + 0.25);
    store.commit(1_700_000_000_000 + t * 2000, batch);
  }
  return store;
}

describe('answers no cache keeps', () => {
  const retention = { rangeSec: 300, intervalSec: 2 };
  const store = bigStore();
  const plain = async (body: unknown): Promise<string> => {
    const query = parseMetricsQuery(body, LIMITS, new PatternCache(LIMITS.maxProgramSize));
    return await evaluatePlainly(store, retention, query);
  };
  const series = (timerangeSec: number): unknown => ({ timerange_sec: timerangeSec, interval_sec: 2 });
  /** As the route asks: the answer kept for this body's text, else a new one. */
  const ask = async (service: MetricsQueryService, body: unknown): Promise<EncodedBody> => {
    const text = JSON.stringify(body);
    return service.cachedAnswer(text) ?? (await service.answer(body, text));
  };
  /** Asks twice, so that the answer is kept for the snapshot (the cache keeps a text's second answer). */
  const askTwice = async (service: MetricsQueryService, body: unknown): Promise<EncodedBody> => {
    service.written(await ask(service, body));
    return await ask(service, body);
  };

  it('reuse the memory of an answer once it is written, and only then', async () => {
    const service = new MetricsQueryService(store, retention, LIMITS);
    // Fill the cache with three answers; they are never given back.
    const cached = [await askTwice(service, series(300)), await askTwice(service, series(298))];
    cached.push(await askTwice(service, series(296)));
    for (const [i, answer] of cached.entries())
      assert.equal(await ask(service, series(300 - 2 * i)), answer, 'cached');
    const a = await ask(service, series(294));
    const b = await ask(service, series(292));
    assert.notEqual(await ask(service, series(294)), a, 'not cached');
    assert.notEqual(a.bytes.buffer, b.bytes.buffer, 'both unwritten: separate memory');
    for (const answer of cached) assert.notEqual(answer.bytes.buffer, a.bytes.buffer);
    assert.ok(a.bytes.toString() === (await plain(series(294))));

    service.written(a);
    const c = await ask(service, series(290));
    assert.equal(c.bytes.buffer, a.bytes.buffer, "a's memory, now c's");
    assert.ok(c.bytes.toString() === (await plain(series(290))));
    assert.ok(b.bytes.toString() === (await plain(series(292))), 'b untouched');

    // A cached answer reported written stays as it is: other requests get it from the cache.
    for (const answer of cached) service.written(answer);
    service.written(c);
    service.written(b);
    const texts = cached.map((answer) => answer.bytes.toString());
    const d = await ask(service, series(288));
    const e = await ask(service, series(286));
    const f = await ask(service, series(284));
    for (const answer of cached)
      assert.ok(![d, e, f].some((made) => made.bytes.buffer === answer.bytes.buffer));
    assert.ok(d.bytes.toString() === (await plain(series(288))));
    assert.ok(e.bytes.toString() === (await plain(series(286))));
    assert.ok(f.bytes.toString() === (await plain(series(284))));
    assert.ok(
      cached.every((answer, i) => answer.bytes.toString() === texts[i]),
      'cached answers unchanged',
    );
    assert.equal(await ask(service, series(300)), cached[0], 'still the cached answer');
    assert.ok(cached[0]!.bytes.toString() === (await plain(series(300))));
  });

  it('give the same bytes as the plain evaluation when every answer reuses the last one', async () => {
    const service = new MetricsQueryService(store, retention, LIMITS);
    for (const range of [300, 298, 296]) await askTwice(service, series(range));
    let reused = 0;
    let previous: ArrayBufferLike | undefined;
    for (let range = 294; range >= 100; range -= 7) {
      const answer = await ask(service, series(range));
      assert.ok(answer.bytes.toString() === (await plain(series(range))), `${range} s`);
      if (answer.bytes.buffer === previous) reused++;
      previous = answer.bytes.buffer;
      service.written(answer);
    }
    assert.ok(reused >= 20, `${reused} answers in reused memory`);
  });

  it('reuse memory for steps past those kept per snapshot too (one engine answers every query)', async () => {
    const service = new MetricsQueryService(store, retention, LIMITS);
    // Fill the answer cache, then use up the 4 steps whose values a snapshot keeps.
    for (const range of [300, 298, 296]) await askTwice(service, series(range));
    for (const step of [3, 4, 5, 6]) await ask(service, { timerange_sec: 300, interval_sec: step });
    const body = (range: number): unknown => ({ timerange_sec: range, interval_sec: 1 });
    const first = await ask(service, body(290));
    assert.ok(first.bytes.length >= MIN_POOLED_BYTES);
    assert.ok(service.reusesMemory(first), 'an answer of a fifth step gives its memory back');
    assert.ok(first.bytes.toString() === (await plain(body(290))));
    service.written(first);
    const second = await ask(service, body(288));
    assert.equal(second.bytes.buffer, first.bytes.buffer, "the first answer's memory");
    assert.ok(second.bytes.toString() === (await plain(body(288))));
  });
});
