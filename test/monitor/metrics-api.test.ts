import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'proc');

/** docs/metrics.md#catalog, copied here so the test pins the contract rather than the code's own table. */
const EXPECTED_CATALOG = [
  ['cpu_idle', 'Percentage of idle CPU', []],
  ['cpu_ncpu', 'Number of logical CPUs in the system', []],
  ['cpu_other', 'Percentage of CPU used for other subsystems', []],
  ['cpu_system', 'Percentage of CPU used for the system', []],
  ['cpu_user', 'Percentage of CPU used for the user', []],
  ['disk_total', 'Total size of the disk in bytes', ['path']],
  ['disk_usage', 'Number of used bytes on the disk', ['path']],
  ['ffmpeg_process', 'Accumulated state changes of all ffmpeg processes', ['state']],
  ['filesystem_files', 'Number of files on the filesystem (excluding directories)', ['name']],
  ['filesystem_limit', 'Total size of the filesystem in bytes, negative if unlimited', ['name']],
  ['filesystem_usage', 'Number of used bytes on the filesystem', ['name']],
  ['mem_free', 'Free memory in bytes', []],
  ['mem_total', 'Total available memory in bytes', []],
  ['net_rx', 'Number of received bytes', ['interface']],
  ['net_tx', 'Number of transmitted bytes', ['interface']],
  [
    'restream_io',
    'Current process IO values by name',
    ['processid', 'type', 'id', 'address', 'index', 'stream', 'media', 'name'],
  ],
  ['restream_process', 'Current process values by name', ['processid', 'state', 'order', 'name']],
  ['restream_process_states', 'Current process state', ['processid', 'state']],
  ['restream_state', 'Summarized current process states', ['state']],
  ['session_active', 'Number of current sessions', ['collector']],
  ['session_limit', 'Max. number of concurrent sessions', ['collector']],
  ['session_maxrxbitrate', 'Max. allowed receiving bitrate in bit per second', ['collector']],
  ['session_maxtxbitrate', 'Max. allowed transmitting bitrate in bit per second', ['collector']],
  ['session_rxbitrate', 'Current receiving bitrate in bit per second', ['collector']],
  ['session_rxbytes', 'Number of received bytes', ['collector']],
  ['session_total', 'Total sessions', ['collector']],
  ['session_txbitrate', 'Current transmitting bitrate in bit per second', ['collector']],
  ['session_txbytes', 'Number of transmitted bytes', ['collector']],
  ['uptime_uptime', 'Current uptime in seconds', []],
].map(([name, description, labels]) => ({ name, description, labels }));

interface Series {
  name: string;
  labels: Record<string, string>;
  values: [number, number][];
}
interface Answer {
  timerange_sec: number;
  interval_sec: number;
  metrics: Series[];
}
interface Envelope {
  code: number;
  message: string;
  details: string[];
}

async function post(
  server: TestServer,
  body: unknown,
  options: { path?: string; raw?: string; contentType?: string } = {},
): Promise<Response> {
  return fetch(`${server.url}${options.path ?? '/api/v3/metrics'}`, {
    method: 'POST',
    headers: { 'content-type': options.contentType ?? 'application/json' },
    body: options.raw ?? JSON.stringify(body),
  });
}

async function query(server: TestServer, body: unknown): Promise<Answer> {
  const response = await post(server, body);
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  return (await response.json()) as Answer;
}

async function expect400(server: TestServer, body: unknown, ...fragments: string[]): Promise<Envelope> {
  const response = await post(server, body);
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
  const envelope = (await response.json()) as Envelope;
  assert.equal(envelope.code, 400);
  assert.equal(envelope.message, 'Bad Request');
  const details = envelope.details.join('\n');
  for (const fragment of fragments) assert.ok(details.includes(fragment), `"${fragment}" not in ${details}`);
  return envelope;
}

/** Polls the latest-value query until `done` holds (collection runs on a timer). */
async function waitFor(
  server: TestServer,
  body: unknown,
  done: (answer: Answer) => boolean,
): Promise<Answer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await query(server, body);
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last answer ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function interfaces(answer: Answer): string[] {
  return answer.metrics.map((series) => series.labels.interface ?? '?');
}

describe('metrics API with collection on (fixture /proc)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { metrics: { enable: true, interval_sec: 1, range_sec: 60 } },
      procRoot: join(FIXTURES, 'host'),
      cgroupRoot: join(FIXTURES, 'cgroup-unlimited'),
    });
    await waitFor(server, { metrics: [{ name: 'cpu_ncpu' }] }, (answer) => answer.metrics.length === 1);
  });
  after(() => server.close());

  it('serves the catalog of 29 metrics sorted by name, also with a trailing slash', async () => {
    for (const path of ['/api/v3/metrics', '/api/v3/metrics/']) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.deepEqual(await response.json(), EXPECTED_CATALOG);
    }
  });

  it('answers the latest values of the host metrics from /proc', async () => {
    const answer = await query(server, {
      metrics: [
        'cpu_ncpu',
        'cpu_idle',
        'cpu_user',
        'mem_total',
        'mem_free',
        'disk_total',
        'uptime_uptime',
      ].map((name) => ({ name })),
    });
    assert.equal(answer.timerange_sec, 60);
    assert.equal(answer.interval_sec, 1);
    const byName = new Map(answer.metrics.map((series) => [series.name, series]));
    assert.deepEqual(
      [...byName.keys()],
      ['cpu_idle', 'cpu_ncpu', 'cpu_user', 'disk_total', 'mem_total', 'mem_free', 'uptime_uptime'].sort(),
    );
    assert.equal(byName.get('cpu_ncpu')!.values[0]![1], 4);
    // The fixture /proc/stat does not change, so every interval is idle.
    assert.equal(byName.get('cpu_idle')!.values[0]![1], 100);
    assert.equal(byName.get('cpu_user')!.values[0]![1], 0);
    assert.equal(byName.get('mem_total')!.values[0]![1], 8_048_576 * 1024);
    assert.equal(byName.get('mem_free')!.values[0]![1], 4_024_288 * 1024);
    assert.deepEqual(byName.get('disk_total')!.labels, { path: join(server.dir, 'data') });
    assert.ok(byName.get('disk_total')!.values[0]![1] > 0);
    const [time] = byName.get('uptime_uptime')!.values[0]!;
    assert.ok(Number.isInteger(time) && Math.abs(time - Date.now() / 1000) < 30, `timestamp ${time}`);
    for (const series of answer.metrics) {
      assert.equal(series.values.length, 1);
      assert.equal(series.values[0]![0], time, 'every series carries the newest snapshot time');
    }
  });

  it('orders series by name, then label values, with labels always an object', async () => {
    const answer = await query(server, {
      metrics: [{ name: 'net_tx' }, { name: 'net_rx' }, { name: 'mem_free' }],
    });
    assert.deepEqual(
      answer.metrics.map((series) => [series.name, series.labels]),
      [
        ['mem_free', {}],
        ...['docker0', 'eth0', 'eth1', 'lo', 'wlan0'].map((name) => ['net_rx', { interface: name }]),
        ...['docker0', 'eth0', 'eth1', 'lo', 'wlan0'].map((name) => ['net_tx', { interface: name }]),
      ],
    );
    const eth0 = answer.metrics.find(
      (series) => series.name === 'net_tx' && series.labels.interface === 'eth0',
    );
    assert.equal(eth0!.values[0]![1], 123_456_789);
  });

  it('selects labels with unanchored RE2 patterns', async () => {
    const select = async (labels: Record<string, string | null>): Promise<string[]> =>
      interfaces(await query(server, { metrics: [{ name: 'net_rx', labels }] }));
    assert.deepEqual(await select({ interface: '^eth' }), ['eth0', 'eth1']);
    assert.deepEqual(await select({ interface: '0' }), ['docker0', 'eth0', 'wlan0']);
    assert.deepEqual(await select({ interface: '^lo$' }), ['lo']);
    assert.deepEqual(await select({ interface: '' }), ['docker0', 'eth0', 'eth1', 'lo', 'wlan0']);
    assert.deepEqual(await select({ interface: null }), ['docker0', 'eth0', 'eth1', 'lo', 'wlan0']);
    assert.deepEqual(await select({ interface: '(?i)^ETH1' }), ['eth1']);
    // A label the metric does not have matches nothing, even with the empty pattern.
    assert.deepEqual(await select({ name: '' }), []);
    assert.deepEqual(await select({ interface: '^eth', name: '' }), []);
  });

  it('combines items with the same name with OR, and ignores unknown names', async () => {
    const answer = await query(server, {
      metrics: [
        { name: 'net_rx', labels: { interface: '^lo$' } },
        { name: 'no_such_metric' },
        { name: 'net_rx', labels: { interface: 'wlan' } },
        { name: 'net_rx', labels: { interface: '^lo' } },
      ],
    });
    assert.deepEqual(interfaces(answer), ['lo', 'wlan0']);
  });

  it('answers time series with sample and hold, ending at the newest snapshot', async () => {
    const body = { metrics: [{ name: 'uptime_uptime' }] };
    const deadline = Date.now() + 20_000;
    let series: Series | undefined;
    let latest: Answer;
    // Two queries must see the same newest snapshot; retry when a collection landed in between.
    do {
      latest = await query(server, body);
      const answer = await query(server, { ...body, timerange_sec: 4, interval_sec: 1 });
      series = answer.metrics[0];
      if (
        series?.values.at(-1)?.[0] !== latest.metrics[0]?.values[0]?.[0] ||
        (series?.values.length ?? 0) < 3
      ) {
        series = undefined;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } while (series === undefined && Date.now() < deadline);
    assert.ok(series !== undefined, 'at least 3 snapshots within 20 s');
    assert.deepEqual(
      series.values.at(-1),
      latest.metrics[0]!.values[0],
      'the newest point is the latest value',
    );
    assert.ok(series.values.length <= 4);
    const times = series.values.map(([time]) => time);
    times
      .slice(1)
      .forEach((time, index) => assert.equal(time - times[index]!, 1, `times ${times.join(',')}`));
    const values = series.values.map(([, value]) => value);
    values
      .slice(1)
      .forEach((value, index) => assert.ok(value >= values[index]!, `uptime ${values.join(',')}`));
  });

  it('answers every series for a time series with an empty metrics list', async () => {
    const answer = await query(server, { timerange_sec: 2, metrics: [] });
    const names = new Set(answer.metrics.map((series) => series.name));
    for (const name of ['cpu_idle', 'mem_total', 'net_rx', 'disk_usage', 'uptime_uptime'])
      assert.ok(names.has(name));
    assert.ok(answer.metrics.every((series) => series.values.length > 0));
  });

  it('serves the same query on the path with a trailing slash', async () => {
    const body = { metrics: [{ name: 'net_rx', labels: { interface: '^eth' } }] };
    const response = await post(server, body, { path: '/api/v3/metrics/' });
    assert.equal(response.status, 200);
    assert.deepEqual(interfaces((await response.json()) as Answer), ['eth0', 'eth1']);
  });

  it('tolerates null fields, labels: null, extra keys, a trailing newline and an empty body', async () => {
    const nulls = await query(server, { timerange_sec: null, interval_sec: null, metrics: null });
    assert.deepEqual(nulls.metrics, []);
    const zero = await query(server, { timerange_sec: 0, interval_sec: 0, metrics: [{ name: 'cpu_ncpu' }] });
    assert.equal(zero.metrics[0]!.values.length, 1, '0 means "not given": latest value');
    const extra = await query(server, {
      extra: true,
      metrics: [{ name: 'net_rx', labels: null, values: null }],
    });
    assert.equal(extra.metrics.length, 5);
    const newline = await post(server, undefined, {
      raw: '{"metrics":[{"name":"mem_total"}]}\n',
      contentType: 'application/json; charset=UTF-8',
    });
    assert.equal(newline.status, 200);
    assert.equal(((await newline.json()) as Answer).metrics[0]!.name, 'mem_total');
    const empty = await post(server, undefined, { raw: '' });
    assert.equal(empty.status, 200);
    assert.deepEqual(((await empty.json()) as Answer).metrics, []);
  });

  it('rejects bad numbers, naming the field', async () => {
    for (const value of [-1, 1.5, '60', true, [], {}]) {
      await expect400(server, { timerange_sec: value }, 'timerange_sec');
      await expect400(server, { timerange_sec: 60, interval_sec: value }, 'interval_sec');
    }
  });

  it('rejects a malformed query, naming the item and the label', async () => {
    await expect400(server, [], 'body');
    await expect400(server, 'cpu_idle', 'body');
    await expect400(server, { metrics: { name: 'cpu_idle' } }, 'metrics');
    await expect400(server, { metrics: [{ name: 'cpu_idle' }, 5] }, 'metrics[1]');
    await expect400(server, { metrics: [{ labels: {} }] }, 'metrics[0].name');
    await expect400(server, { metrics: [{ name: 7 }] }, 'metrics[0].name');
    await expect400(
      server,
      { metrics: [{ name: 'net_rx', labels: ['eth0'] }] },
      'metrics[0] (net_rx).labels',
    );
    await expect400(server, { metrics: [{ name: 'net_rx', labels: { interface: 5 } }] }, 'labels.interface');
    const envelope = await expect400(
      server,
      {
        timerange_sec: -5,
        metrics: [{ name: 'cpu_idle' }, { name: 'net_rx', labels: { interface: '(eth' } }],
      },
      'timerange_sec',
      'metrics[1] (net_rx).labels.interface',
      'missing closing )',
    );
    assert.equal(envelope.details.length, 2, 'every problem is listed');
  });

  it('rejects an invalid RE2 pattern also for a metric name it does not know', async () => {
    await expect400(
      server,
      { metrics: [{ name: 'future_metric', labels: { x: '[' } }] },
      'metrics[0] (future_metric).labels.x',
    );
    // Perl syntax RE2 does not have (look-behind) is invalid, not silently matching nothing.
    await expect400(
      server,
      { metrics: [{ name: 'net_rx', labels: { interface: '(?<=e)th' } }] },
      'labels.interface',
    );
  });

  it('bounds the pattern length and the number of items', async () => {
    await query(server, { metrics: [{ name: 'net_rx', labels: { interface: 'a'.repeat(1000) } }] });
    await expect400(
      server,
      { metrics: [{ name: 'net_rx', labels: { interface: 'a'.repeat(1001) } }] },
      'at most 1000',
    );
    await query(server, { metrics: Array.from({ length: 1000 }, () => ({ name: 'cpu_idle' })) });
    await expect400(
      server,
      { metrics: Array.from({ length: 1001 }, () => ({ name: 'cpu_idle' })) },
      'metrics: at most 1000 items',
    );
  });

  it('gzip-compresses answers of 1 KiB and more for clients that accept gzip', async () => {
    const plain = await fetch(`${server.url}/api/v3/metrics`, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(plain.headers.get('vary'), 'Accept-Encoding');
    const catalog: unknown = await plain.json();
    for (let i = 0; i < 2; i++) {
      const gzipped = await fetch(`${server.url}/api/v3/metrics`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gzipped.headers.get('content-encoding'), 'gzip');
      assert.deepEqual(await gzipped.json(), catalog);
    }
    const answer = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'br;q=1, gzip;q=0.5' },
      body: JSON.stringify({ timerange_sec: 60, metrics: [] }),
    });
    assert.equal(answer.headers.get('content-encoding'), 'gzip');
    assert.ok(((await answer.json()) as Answer).metrics.length > 5);
    const small = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      body: JSON.stringify({ metrics: [{ name: 'cpu_ncpu' }] }),
    });
    assert.equal(small.headers.get('content-encoding'), null, 'below 1 KiB: not worth it');
  });

  it('answers a repeated identical body alike, and never remembers an invalid one', async () => {
    const text = '{"metrics":[{"name":"net_rx","labels":{"interface":"^eth"}}]}';
    const first = await post(server, undefined, { raw: text });
    const second = await post(server, undefined, { raw: text });
    assert.deepEqual(interfaces((await second.json()) as Answer), interfaces((await first.json()) as Answer));
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await post(server, undefined, { raw: '{"metrics":[{"name":"net_rx","labels":{"interface":"("}}]}' }))
          .status,
        400,
      );
      assert.equal((await post(server, undefined, { raw: '{"metrics":' })).status, 400);
    }
  });

  it('bounds the body size (413)', async () => {
    const response = await post(server, undefined, {
      raw: JSON.stringify({ metrics: [{ name: 'x'.repeat(70_000) }] }),
    });
    assert.equal(response.status, 413);
    const envelope = (await response.json()) as Envelope;
    assert.equal(envelope.code, 413);
    assert.deepEqual(envelope.details, ['request body is larger than the limit of 65536 bytes']);
  });

  it('gzips a long error envelope for clients that accept it', async () => {
    const metrics = Array.from({ length: 50 }, (_, index) => ({
      name: 'net_rx',
      labels: { interface: `(${index}` },
    }));
    const response = await post(server, { metrics });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('content-encoding'), 'gzip');
    const envelope = (await response.json()) as Envelope;
    assert.equal(envelope.details.length, 50);
    const plain = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' },
      body: JSON.stringify({ metrics }),
    });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.deepEqual(await plain.json(), envelope);
  });

  it('keeps the conventions for malformed JSON and other content types', async () => {
    const malformed = await post(server, undefined, { raw: '{"metrics": [\n  {"name": "cpu_idle"} {}]}' });
    assert.equal(malformed.status, 400);
    const envelope = (await malformed.json()) as Envelope;
    assert.equal(envelope.message, 'Invalid JSON');
    assert.deepEqual(envelope.details, [
      "expected ',' or ']', found '{' at line 2, column 24 (character 37)",
    ]);
    const text = await post(server, undefined, { raw: '{}', contentType: 'text/plain' });
    assert.equal(text.status, 415);
    const unsupported = (await text.json()) as Envelope;
    assert.equal(unsupported.code, 415);
    assert.deepEqual(unsupported.details, [
      'Content-Type "text/plain" is not accepted: send application/json',
    ]);
  });
});

describe('metrics API with collection off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { metrics: { enable: false } } });
  });
  after(() => server.close());

  it('still serves the catalog', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), EXPECTED_CATALOG);
  });

  it('answers every query with zero retention and no metrics', async () => {
    for (const body of [{ metrics: [{ name: 'cpu_idle' }] }, { timerange_sec: 60, metrics: [] }, {}]) {
      const response = await post(server, body);
      assert.equal(response.status, 200);
      assert.equal(await response.text(), '{"timerange_sec":0,"interval_sec":0,"metrics":[]}');
    }
  });

  it('still rejects invalid queries', async () => {
    await expect400(server, { interval_sec: 'x' }, 'interval_sec');
  });
});

describe('metrics API bounds from config', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        metrics: {
          enable: true,
          interval_sec: 1,
          range_sec: 10,
          query: { max_items: 2, max_pattern_length: 3 },
        },
      },
      procRoot: join(FIXTURES, 'host'),
      cgroupRoot: join(FIXTURES, 'cgroup-unlimited'),
    });
  });
  after(() => server.close());

  it('applies metrics.query.max_items and max_pattern_length', async () => {
    await query(server, {
      metrics: [{ name: 'net_rx', labels: { interface: 'eth' } }, { name: 'cpu_idle' }],
    });
    await expect400(server, { metrics: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }, 'at most 2 items');
    await expect400(
      server,
      { metrics: [{ name: 'net_rx', labels: { interface: '^eth' } }] },
      'at most 3 are allowed',
    );
  });
});
