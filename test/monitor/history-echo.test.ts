import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

interface Answer {
  timerange_sec: number;
  interval_sec: number;
  metrics: { name: string; values: [number, number][] }[];
}

/**
 * What a metrics answer echoes (issue 24, item 12; docs/metrics.md): an answer from a history
 * tier echoes the range and the step it used; an answer from the raw window echoes the configured
 * window and collection interval, as the reference does.
 */
describe('metrics answers echo what they answered', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { metrics: { enable: true, interval_sec: 1, range_sec: 300 } } });
  });
  after(() => server.close());

  async function echo(body: unknown): Promise<[number, number]> {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as Answer;
    return [answer.timerange_sec, answer.interval_sec];
  }

  it('a range the minute tier answers: its range and step', async () => {
    assert.deepEqual(
      await echo({ timerange_sec: 7200, interval_sec: 60, metrics: [{ name: 'cpu_idle' }] }),
      [7200, 60],
    );
    assert.deepEqual(await echo({ timerange_sec: 7200, interval_sec: 90 }), [7200, 90]);
    // Without interval_sec, the tier's step: a minute, widened over a week to keep 10 000 points.
    assert.deepEqual(await echo({ timerange_sec: 7200, metrics: [{ name: 'cpu_idle' }] }), [7200, 60]);
    assert.deepEqual(await echo({ timerange_sec: 7 * 86_400, metrics: [{ name: 'cpu_idle' }] }), [
      7 * 86_400,
      120,
    ]);
  });

  it('a range the hour tier answers: its range and step, the range at most the longest retention', async () => {
    assert.deepEqual(await echo({ timerange_sec: 30 * 86_400, metrics: [{ name: 'cpu_idle' }] }), [
      30 * 86_400,
      3600,
    ]);
    assert.deepEqual(await echo({ timerange_sec: 1000 * 86_400, interval_sec: 86_400 }), [
      400 * 86_400,
      86_400,
    ]);
  });

  it('the raw window: the configured window and interval, as the reference', async () => {
    assert.deepEqual(
      await echo({ timerange_sec: 120, interval_sec: 10, metrics: [{ name: 'cpu_idle' }] }),
      [300, 1],
    );
    assert.deepEqual(await echo({ timerange_sec: 300 }), [300, 1]);
    assert.deepEqual(await echo({ metrics: [{ name: 'cpu_idle' }] }), [300, 1]);
  });
});
