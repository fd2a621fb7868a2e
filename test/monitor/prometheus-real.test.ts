import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';

const PROMETHEUS = '/usr/bin/prometheus';
const GOLDEN = join(import.meta.dirname, '..', 'fixtures', 'prometheus');
const GOLDEN_CORE = '2b1f5c8e-0d0e-4c8a-9a51-5f3c0e2a7d11';

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

/**
 * Serves the golden expositions (every family with samples, label values that need escaping) on
 * loopback: `/text` in the 0.0.4 format and `/openmetrics` in OpenMetrics, each with its content type.
 */
async function serveGolden(): Promise<Server> {
  const text = await readFile(join(GOLDEN, 'exposition-0.0.4.txt'));
  const openMetrics = await readFile(join(GOLDEN, 'exposition-openmetrics.txt'));
  const golden = createHttpServer((request, response) => {
    if (request.url === '/openmetrics') {
      response.writeHead(200, {
        'content-type': 'application/openmetrics-text; version=1.0.0; charset=utf-8',
      });
      response.end(openMetrics);
    } else {
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      response.end(text);
    }
  });
  await new Promise<void>((resolve) => golden.listen(0, '127.0.0.1', resolve));
  return golden;
}

/** Stops the Prometheus we started: SIGTERM, SIGKILL if it has not exited after 10 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

describe('a real Prometheus scraping GET /metrics', () => {
  let server: TestServer;
  let dir: string;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let golden: Server;
  let log = '';

  before(async () => {
    server = await startServer({
      config: {
        metrics: {
          enable: true,
          enable_prometheus: true,
          interval_sec: 1,
          range_sec: 60,
          prometheus: { bearer_token: 'scrape-token', username: 'scraper', password: 'scrape-password' },
        },
      },
    });
    dir = await mkdtemp(join(tmpdir(), 'streamcore-prometheus-'));
    const target = new URL(server.url).host;
    golden = await serveGolden();
    const goldenAddress = golden.address();
    const goldenTarget = `127.0.0.1:${typeof goldenAddress === 'object' && goldenAddress !== null ? goldenAddress.port : 0}`;
    // One job per credential kind, so both are checked by Prometheus itself.
    await writeFile(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        'scrape_configs:',
        '  - job_name: streamcore-bearer',
        '    authorization:',
        '      credentials: scrape-token',
        '    static_configs:',
        `      - targets: ['${target}']`,
        '  - job_name: streamcore-basic',
        '    basic_auth:',
        '      username: scraper',
        '      password: scrape-password',
        '    static_configs:',
        `      - targets: ['${target}']`,
        '  - job_name: golden-text',
        '    metrics_path: /text',
        '    static_configs:',
        `      - targets: ['${goldenTarget}']`,
        '  - job_name: golden-openmetrics',
        '    metrics_path: /openmetrics',
        '    static_configs:',
        `      - targets: ['${goldenTarget}']`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    prometheus.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  });

  after(async () => {
    if (prometheus !== undefined) await stopProcess(prometheus);
    await server?.close();
    if (golden !== undefined) await new Promise((resolve) => golden.close(resolve));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function instantQuery(query: string): Promise<VectorResult[]> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(query)}`);
    const body = (await response.json()) as { status: string; data: { result: VectorResult[] } };
    assert.equal(body.status, 'success');
    return body.data.result;
  }

  /** Polls Prometheus until `query` has `count` results (Prometheus takes a few seconds to start and scrape). */
  async function waitForResults(query: string, count: number): Promise<VectorResult[]> {
    const deadline = Date.now() + 90_000;
    let last: unknown;
    for (;;) {
      if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
      try {
        const results = await instantQuery(query);
        if (results.length >= count) return results;
        last = results;
      } catch (error) {
        last = error; // not listening yet
      }
      if (Date.now() > deadline)
        throw new Error(`no ${query} in Prometheus: ${JSON.stringify(last)}\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  it('scrapes our samples with the core label, through both credentials', async () => {
    const results = await waitForResults('cpu_ncpu{job=~"streamcore-.*"}', 2);
    assert.deepEqual(results.map((result) => result.metric.job).sort(), [
      'streamcore-basic',
      'streamcore-bearer',
    ]);
    for (const result of results) {
      assert.equal(result.metric.core, server.config.id);
      assert.ok(Number(result.value[1]) >= 1);
    }
  });

  it('reports every target up, with no scrape error', async () => {
    type Target = { health: string; lastError: string; scrapePool: string };
    const deadline = Date.now() + 30_000;
    let targets: Target[];
    do {
      const response = await fetch(`${prometheusUrl}/api/v1/targets`);
      targets = ((await response.json()) as { data: { activeTargets: Target[] } }).data.activeTargets;
      if (targets.every((target) => target.health !== 'unknown')) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    } while (Date.now() < deadline);
    assert.equal(targets.length, 4);
    for (const target of targets)
      assert.deepEqual([target.health, target.lastError], ['up', ''], target.scrapePool);
  });

  it('has the families this module owns, with their labels', async () => {
    const job = '{job="streamcore-bearer"}';
    const uptime = await waitForResults(`uptime_seconds${job}`, 1);
    assert.ok(Number(uptime[0]!.value[1]) >= 0);
    const loopback = await waitForResults(`net_rx_bytes{job="streamcore-bearer",interface="lo"}`, 1);
    assert.equal(loopback[0]!.metric.core, server.config.id);
    const disk = await waitForResults(`disk_total_bytes${job}`, 1);
    assert.equal(disk[0]!.metric.path, server.config.storage.disk.dir);
    for (const family of [
      'cpu_idle_time_percent',
      'cpu_user_time_percent',
      'cpu_system_time_percent',
      'cpu_other_time_percent',
      'mem_total_bytes',
      'mem_free_bytes',
      'disk_usage_bytes',
      'net_tx_bytes',
    ]) {
      await waitForResults(`${family}${job}`, 1);
    }
    // The CPU percentages add up to 100.
    const sum = await waitForResults(
      `cpu_idle_time_percent${job} + ignoring() cpu_user_time_percent${job} + ignoring() cpu_system_time_percent${job} + ignoring() cpu_other_time_percent${job}`,
      1,
    );
    assert.ok(Math.abs(Number(sum[0]!.value[1]) - 100) < 0.5, `sum ${sum[0]!.value[1]}`);
  });

  it('accepts the golden expositions of every family in both formats, escaped label values included', async () => {
    for (const job of ['golden-text', 'golden-openmetrics']) {
      const io = await waitForResults(`ffmpeg_process_io{job="${job}"}`, 2);
      assert.deepEqual(
        io
          .map((result) => [result.metric.process, result.metric.type, result.metric.name, result.value[1]])
          .sort((a, b) => (a[1]! < b[1]! ? -1 : 1)),
        [
          ['cam"1', 'input', 'fps', '25'],
          ['cam"1', 'output', 'bitrate', '1500000.5'],
        ],
      );
      assert.ok(
        io.every((result) => result.metric.address === undefined && result.metric.core === GOLDEN_CORE),
      );
      const process = await waitForResults(`ffmpeg_process{job="${job}",name="fps"}`, 1);
      assert.equal(process[0]!.metric.process, 'studio\\a\nb');
      const states = await waitForResults(`ffmpeg_states_total{job="${job}"}`, 6);
      assert.equal(states.length, 6);
      const sessions = await waitForResults(`session_total{job="${job}"}`, 1);
      assert.deepEqual([sessions[0]!.metric.collector, sessions[0]!.value[1]], ['hls', '17']);
      const limit = await waitForResults(`filesystem_limit_bytes{job="${job}",name="diskfs"}`, 1);
      assert.equal(limit[0]!.value[1], '-1');
    }
  });

  it('read the OpenMetrics answer (its family types are in the metadata)', async () => {
    const metadata = async (metric: string): Promise<{ type: string; help: string } | undefined> => {
      const target = encodeURIComponent('{job="streamcore-bearer"}');
      const response = await fetch(
        `${prometheusUrl}/api/v1/targets/metadata?match_target=${target}&metric=${metric}`,
      );
      return ((await response.json()) as { data: { type: string; help: string }[] }).data[0];
    };
    assert.deepEqual(await metadata('cpu_ncpu'), {
      target: { instance: new URL(server.url).host, job: 'streamcore-bearer' },
      type: 'gauge',
      help: 'Number of logical CPUs in the system',
      unit: '',
    });
    // Declared `unknown` in OpenMetrics so that the sample name stays `uptime_seconds` (see docs/metrics.md).
    assert.equal((await metadata('uptime_seconds'))?.type, 'unknown');
  });
});
