import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'proc');
const TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

const hostFixtures = { procRoot: join(FIXTURES, 'host'), cgroupRoot: join(FIXTURES, 'cgroup-unlimited') };

/** The value of the one sample of `family` in an exposition. */
function sampleValue(text: string, family: string): number | undefined {
  const match = new RegExp(`^${family}\\{[^}]*\\} (\\S+)$`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** Runs `promtool check metrics` on a text exposition: exit 1 = parse error, 3 = lint findings only. */
function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

describe('GET /metrics while enable_prometheus is off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { metrics: { enable: true, enable_prometheus: false } },
      ...hostFixtures,
    });
  });
  after(() => server.close());

  it('answers 404 with the envelope, also when the disk holds a file called metrics', async () => {
    await writeFile(join(server.config.storage.disk.dir, 'metrics'), 'not the exposition');
    const response = await fetch(`${server.url}/metrics`);
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const envelope = (await response.json()) as Envelope;
    assert.equal(envelope.code, 404);
    assert.equal(envelope.message, 'Not Found');
    assert.ok(envelope.details.length > 0);
  });
});

describe('GET /metrics with collection on', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 10 } },
      ...hostFixtures,
    });
  });
  after(() => server.close());

  async function scrape(accept?: string): Promise<Response> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const response = await fetch(`${server.url}/metrics`, {
        headers: accept === undefined ? {} : { accept },
      });
      const text = await response.clone().text();
      if (text.includes('cpu_ncpu{') || Date.now() > deadline) return response;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('serves the text format 0.0.4 with every sample labelled with the core id', async () => {
    const response = await scrape();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), TEXT_TYPE);
    const text = await response.text();
    const core = server.config.id;
    assert.match(text, new RegExp(`^cpu_ncpu\\{core="${core}"\\} 4$`, 'm'));
    assert.match(text, new RegExp(`^net_rx_bytes\\{core="${core}",interface="eth0"\\} 987654321$`, 'm'));
    assert.match(text, new RegExp(`^mem_total_bytes\\{core="${core}"\\} ${8_048_576 * 1024}$`, 'm'));
    assert.match(text, /^# TYPE uptime_seconds counter$/m);
    const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    assert.ok(samples.length > 10);
    for (const line of samples) assert.ok(line.includes(`core="${core}"`), line);
    assert.ok(!text.includes('# EOF'));
  });

  it('is parsed by promtool (only the suffix lints of the compatible names)', async () => {
    const { code, output } = await promtoolCheck(await (await scrape()).text());
    assert.notEqual(code, 1, output);
    const findings = output
      .trim()
      .split('\n')
      .filter((line) => line !== '');
    for (const finding of findings) assert.match(finding, /counter metrics should have "_total" suffix/);
  });

  it('serves OpenMetrics when the scraper asks for it', async () => {
    const response = await scrape(PROMETHEUS_ACCEPT);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), OPENMETRICS_TYPE);
    const text = await response.text();
    assert.ok(text.endsWith('\n# EOF\n'));
    assert.match(text, /^# TYPE uptime_seconds unknown$/m);
    assert.match(text, /^uptime_seconds\{core="[^"]+"\} [\d.]+$/m);
  });
});

describe('GET /metrics with collection off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { metrics: { enable: false, enable_prometheus: true, interval_sec: 2 } },
      ...hostFixtures,
    });
  });
  after(() => server.close());

  it('collects on demand, at most once per interval', async () => {
    const first = await (await fetch(`${server.url}/metrics`)).text();
    const uptime = sampleValue(first, 'uptime_seconds');
    assert.ok(uptime !== undefined, first);
    assert.equal(sampleValue(first, 'cpu_ncpu'), 4);
    const again = await (await fetch(`${server.url}/metrics`)).text();
    const second = sampleValue(again, 'uptime_seconds')!;
    // Either the same snapshot, or (on a very slow machine) a new one at least an interval later.
    assert.ok(second === uptime || second >= uptime + 1.9, `${uptime} then ${second}`);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const later = sampleValue(await (await fetch(`${server.url}/metrics`)).text(), 'uptime_seconds')!;
    assert.ok(later >= uptime + 1.9, `${uptime} then ${later}`);
  });

  it('keeps the query API in its disabled form', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"metrics":[{"name":"cpu_ncpu"}]}',
    });
    assert.equal(await response.text(), '{"timerange_sec":0,"interval_sec":0,"metrics":[]}');
  });
});

describe('GET /metrics with a scrape credential', () => {
  let bearerOnly: TestServer;
  let both: TestServer;
  before(async () => {
    bearerOnly = await startServer({
      config: {
        metrics: { enable: true, enable_prometheus: true, prometheus: { bearer_token: 's3cret-token' } },
      },
      ...hostFixtures,
    });
    both = await startServer({
      config: {
        metrics: {
          enable: true,
          enable_prometheus: true,
          prometheus: { bearer_token: 'tok', username: 'scraper', password: 'p@ss:word' },
        },
      },
      ...hostFixtures,
    });
  });
  after(async () => {
    await bearerOnly.close();
    await both.close();
  });

  const basic = (user: string, password: string): string =>
    `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  async function expect401(server: TestServer, authorization?: string): Promise<Response> {
    const response = await fetch(`${server.url}/metrics`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    assert.equal(response.status, 401, `${authorization}`);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const envelope = (await response.json()) as Envelope;
    assert.equal(envelope.code, 401);
    assert.equal(envelope.message, 'Unauthorized');
    assert.ok(envelope.details.length > 0);
    return response;
  }

  async function expect200(server: TestServer, authorization: string): Promise<void> {
    const response = await fetch(`${server.url}/metrics`, { headers: { authorization } });
    assert.equal(response.status, 200, authorization);
    assert.equal(response.headers.get('content-type'), TEXT_TYPE);
  }

  it('asks for the bearer token', async () => {
    const response = await expect401(bearerOnly);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    await expect401(bearerOnly, 'Bearer wrong');
    await expect401(bearerOnly, 'Bearer s3cret-token-and-more');
    await expect401(bearerOnly, basic('x', 's3cret-token'));
    await expect401(bearerOnly, 's3cret-token');
    await expect200(bearerOnly, 'Bearer s3cret-token');
    await expect200(bearerOnly, 'bearer s3cret-token');
  });

  it('accepts either configured credential', async () => {
    const response = await expect401(both);
    assert.match(
      response.headers.get('www-authenticate') ?? '',
      /^Bearer realm="metrics", Basic realm="metrics"/,
    );
    await expect401(both, basic('scraper', 'wrong'));
    await expect401(both, basic('other', 'p@ss:word'));
    await expect401(both, 'Basic !!!not-base64');
    await expect200(both, basic('scraper', 'p@ss:word'));
    await expect200(both, 'Bearer tok');
  });
});
