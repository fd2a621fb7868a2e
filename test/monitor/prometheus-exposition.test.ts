import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { MetricName } from '../../src/monitor/store/catalog.js';
import { acceptsGzip } from '../../src/http/index.js';
import {
  escapeHelpOpenMetrics,
  escapeHelpText,
  escapeLabelValue,
} from '../../src/monitor/prometheus/escape.js';
import {
  EXPOSITION_CONTENT_TYPES,
  negotiateFormat,
  PrometheusExposition,
  prometheusFamilies,
} from '../../src/monitor/prometheus/index.js';
import { SampleBatch } from '../../src/monitor/store/sample-batch.js';
import { METRIC_INDEX, MetricStore } from '../../src/monitor/store/store.js';

const GOLDEN = join(import.meta.dirname, '..', 'fixtures', 'prometheus');
const STATES = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'];

/** A store holding one snapshot with samples for every family, label values that need escaping included. */
function goldenStore(): MetricStore {
  const store = new MetricStore(3);
  const samples: [MetricName, string[], number][] = [
    ['cpu_idle', [], 80.5],
    ['cpu_ncpu', [], 4],
    ['cpu_other', [], 1.25],
    ['cpu_system', [], 5],
    ['cpu_user', [], 13.25],
    ['disk_total', ['/var/lib/streamcore/data'], 1_000_204_886_016],
    ['disk_usage', ['/var/lib/streamcore/data'], 123_456_789],
    ...STATES.map((state, index): [MetricName, string[], number] => ['ffmpeg_process', [state], index * 3]),
    ['filesystem_files', ['diskfs'], 12],
    ['filesystem_files', ['memfs'], 7],
    ['filesystem_limit', ['diskfs'], -1],
    ['filesystem_limit', ['memfs'], 104_857_600],
    ['filesystem_usage', ['diskfs'], 4096],
    ['filesystem_usage', ['memfs'], 1_048_576],
    ['mem_free', [], 4_120_870_912],
    ['mem_total', [], 8_241_741_824],
    ['net_rx', ['eth0'], 987_654_321],
    ['net_rx', ['lo'], 1_048_576],
    ['net_tx', ['eth0'], 123_456_789],
    ['net_tx', ['lo'], 1_048_576],
    // The address carries credentials and must not appear; the id needs escaping.
    [
      'restream_io',
      ['cam"1', 'input', 'in', 'rtmp://user:secret@example.com/live', '0', '0', 'video', 'fps'],
      25,
    ],
    [
      'restream_io',
      ['cam"1', 'output', 'hls', 'http://admin:pw@127.0.0.1/memfs/x.m3u8', '0', '0', 'video', 'bitrate'],
      1_500_000.5,
    ],
    ['restream_process', ['studio\\a\nb', 'running', 'start', 'fps'], 25.003],
    ['restream_process', ['studio\\a\nb', 'running', 'start', 'memory'], 52_428_800],
    ['restream_process_states', ['studio\\a\nb', 'running'], 1],
    ['restream_process_states', ['studio\\a\nb', 'failed'], 2],
    ...STATES.map((state, index): [MetricName, string[], number] => [
      'restream_state',
      [state],
      index === 2 ? 1 : 0,
    ]),
    ['session_active', ['hls'], 3],
    ['session_active', ['hlsingress'], 1],
    ['session_limit', ['hls'], 100], // not exported to Prometheus
    ['session_rxbytes', ['hls'], 2048],
    ['session_total', ['hls'], 17],
    ['session_txbytes', ['hls'], 987_654],
    ['uptime_uptime', [], 3600.25],
  ];
  const batch = new SampleBatch();
  for (const [metric, labels, value] of samples)
    batch.add(store.intern(METRIC_INDEX.get(metric)!, labels), value);
  store.commit(1_795_314_780_000, batch);
  return store;
}

async function assertGolden(file: string, actual: string): Promise<void> {
  const path = join(GOLDEN, file);
  // Regenerate with UPDATE_GOLDEN=1 after a deliberate change, then review the diff.
  if (process.env.UPDATE_GOLDEN === '1') await writeFile(path, actual);
  assert.equal(actual, await readFile(path, 'utf8'));
}

describe('Prometheus exposition', () => {
  const CORE = '2b1f5c8e-0d0e-4c8a-9a51-5f3c0e2a7d11';

  it('renders the text format 0.0.4 byte for byte', async () => {
    await assertGolden('exposition-0.0.4.txt', new PrometheusExposition(goldenStore(), CORE).render('text'));
  });

  it('renders OpenMetrics byte for byte, ending with # EOF', async () => {
    const text = new PrometheusExposition(goldenStore(), CORE).render('openmetrics');
    assert.ok(text.endsWith('\n# EOF\n'));
    await assertGolden('exposition-openmetrics.txt', text);
  });

  it('lists HELP and TYPE for every family even before the first snapshot', () => {
    const text = new PrometheusExposition(new MetricStore(1), 'x').render('text');
    assert.equal(text.split('\n').filter((line) => line.startsWith('# HELP ')).length, 24);
    assert.equal(text.split('\n').filter((line) => line.startsWith('# TYPE ')).length, 24);
    assert.ok(!/^[a-z]/m.test(text), 'no samples');
  });

  it('has the families, types, helps and label names of docs/metrics.md#prometheus-get-metrics', () => {
    const table = prometheusFamilies().map((family) => [
      family.name,
      family.type,
      family.help,
      family.labels.map((label) => label.name).join(', '),
    ]);
    assert.deepEqual(table, [
      ['cpu_idle_time_percent', 'gauge', 'CPU idle time in percent', 'core'],
      ['cpu_ncpu', 'gauge', 'Number of logical CPUs in the system', 'core'],
      ['cpu_other_time_percent', 'gauge', 'CPU other time in percent', 'core'],
      ['cpu_system_time_percent', 'gauge', 'CPU system time in percent', 'core'],
      ['cpu_user_time_percent', 'gauge', 'CPU user time in percent', 'core'],
      ['disk_total_bytes', 'gauge', 'Total size of the disk in bytes', 'core, path'],
      ['disk_usage_bytes', 'gauge', 'Number of used bytes on the disk', 'core, path'],
      ['ffmpeg_process', 'gauge', 'General stats per process', 'core, name, order, process, state'],
      [
        'ffmpeg_process_io',
        'gauge',
        'Stats per input and output of a process',
        'core, id, index, media, name, process, stream, type',
      ],
      ['ffmpeg_process_states', 'gauge', 'Accumulated states per process', 'core, process, state'],
      ['ffmpeg_states', 'gauge', 'Current process states', 'core, state'],
      ['ffmpeg_states_total', 'counter', 'Accumulated process states', 'core, state'],
      ['filesystem_files', 'gauge', 'Number of files on the filesystem', 'core, name'],
      [
        'filesystem_limit_bytes',
        'gauge',
        'Size limit of the filesystem in bytes, negative if unlimited',
        'core, name',
      ],
      ['filesystem_usage_bytes', 'gauge', 'Number of used bytes on the filesystem', 'core, name'],
      ['mem_free_bytes', 'gauge', 'Free memory in bytes', 'core'],
      ['mem_total_bytes', 'gauge', 'Total available memory in bytes', 'core'],
      ['net_rx_bytes', 'gauge', 'Number of received bytes by interface', 'core, interface'],
      ['net_tx_bytes', 'gauge', 'Number of sent bytes by interface', 'core, interface'],
      ['session_active', 'gauge', 'Current number of active sessions by collector', 'collector, core'],
      ['session_rx_bytes', 'counter', 'Total received bytes by collector', 'collector, core'],
      ['session_total', 'counter', 'Total number of sessions by collector', 'collector, core'],
      ['session_tx_bytes', 'counter', 'Total sent bytes by collector', 'collector, core'],
      ['uptime_seconds', 'counter', 'Number of seconds the core is up', 'core'],
    ]);
  });

  it('renders a new text after a commit and the same text until then', () => {
    const store = goldenStore();
    const exposition = new PrometheusExposition(store, 'core');
    const first = exposition.render('text');
    assert.equal(exposition.render('text'), first);
    const batch = new SampleBatch();
    batch.add(store.intern(METRIC_INDEX.get('uptime_uptime')!, []), 3602);
    store.commit(1_795_314_782_000, batch);
    const second = exposition.render('text');
    assert.match(second, /^uptime_seconds\{core="core"\} 3602$/m);
    assert.doesNotMatch(
      second,
      /^net_rx_bytes\{/m,
      'series without a sample in the newest snapshot are left out',
    );
  });
});

describe('Prometheus escaping', () => {
  it('escapes label values: backslash, double quote, line feed', () => {
    assert.equal(escapeLabelValue('plain'), 'plain');
    assert.equal(escapeLabelValue('a\\b'), 'a\\\\b');
    assert.equal(escapeLabelValue('say "hi"'), 'say \\"hi\\"');
    assert.equal(escapeLabelValue('two\nlines'), 'two\\nlines');
    assert.equal(escapeLabelValue('\\"\n'), '\\\\\\"\\n');
    assert.equal(escapeLabelValue('tab\tstays'), 'tab\tstays');
  });

  it('escapes help text: backslash and line feed in 0.0.4, also double quotes in OpenMetrics', () => {
    assert.equal(escapeHelpText('a\\b "q"\nc'), 'a\\\\b "q"\\nc');
    assert.equal(escapeHelpOpenMetrics('a\\b "q"\nc'), 'a\\\\b \\"q\\"\\nc');
  });
});

describe('Accept-Encoding', () => {
  it('accepts gzip when listed with a positive quality, or through *', () => {
    assert.equal(acceptsGzip('gzip'), true);
    assert.equal(acceptsGzip('gzip, deflate, br'), true);
    assert.equal(acceptsGzip('br;q=1.0, GZIP;q=0.5'), true);
    assert.equal(acceptsGzip('*'), true);
    assert.equal(acceptsGzip('x-gzip'), true);
  });

  it('refuses gzip when absent or with quality 0', () => {
    assert.equal(acceptsGzip(undefined), false);
    assert.equal(acceptsGzip(''), false);
    assert.equal(acceptsGzip('identity'), false);
    assert.equal(acceptsGzip('br, deflate'), false);
    assert.equal(acceptsGzip('gzip;q=0'), false);
    assert.equal(acceptsGzip('*, gzip;q=0'), false);
    assert.equal(acceptsGzip('*;q=0'), false);
  });
});

describe('Prometheus content negotiation', () => {
  it('serves OpenMetrics when asked for it with at least the quality of text', () => {
    const prometheus =
      'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
    assert.equal(negotiateFormat(prometheus), 'openmetrics');
    assert.equal(negotiateFormat('application/openmetrics-text'), 'openmetrics');
    assert.equal(negotiateFormat('Application/OpenMetrics-Text; version=1.0.0'), 'openmetrics');
  });

  it('serves the text format otherwise', () => {
    assert.equal(negotiateFormat(undefined), 'text');
    assert.equal(negotiateFormat('*/*'), 'text');
    assert.equal(negotiateFormat('text/plain;version=0.0.4'), 'text');
    assert.equal(negotiateFormat('application/openmetrics-text;q=0.3,text/plain;q=0.9'), 'text');
    assert.equal(negotiateFormat('application/openmetrics-text;q=0'), 'text');
  });

  it('names the exact content types', () => {
    assert.equal(EXPOSITION_CONTENT_TYPES.text, 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(
      EXPOSITION_CONTENT_TYPES.openmetrics,
      'application/openmetrics-text; version=1.0.0; charset=utf-8',
    );
  });
});
