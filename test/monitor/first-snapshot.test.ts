import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

interface Answer {
  metrics: { name: string; values: [number, number][] }[];
}

/**
 * The first snapshot is collected before the listener opens (issue 11): the first metrics query,
 * sent as soon as the server is started, already finds series. The interval is long, so no
 * periodic tick can have filled the store in the meantime.
 */
describe('metrics: the first snapshot exists before the first request', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { metrics: { enable: true, interval_sec: 30, range_sec: 300 } } });
  });
  after(() => server.close());

  it('a query right after start answers with series of the host and of the server', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        metrics: [{ name: 'cpu_ncpu' }, { name: 'mem_total' }, { name: 'uptime_uptime' }],
      }),
    });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as Answer;
    for (const name of ['cpu_ncpu', 'mem_total', 'uptime_uptime']) {
      const series = answer.metrics.filter((item) => item.name === name);
      assert.ok(series.length > 0, `${name}: no series`);
      assert.ok(
        series.some((item) => item.values.length > 0),
        `${name}: no values`,
      );
    }
  });
});
