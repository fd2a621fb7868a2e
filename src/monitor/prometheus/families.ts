import { CATALOG, type MetricName, METRIC_INDEX } from '../store/index.js';

/** One row of the families table of docs/metrics.md#prometheus-get-metrics. */
interface FamilyDefinition {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  source: MetricName;
  /** Catalog labels renamed on the way out. */
  rename?: Readonly<Record<string, string>>;
  /** Catalog labels left out (e.g. `address`, which may carry credentials). */
  drop?: readonly string[];
}

/** docs/metrics.md#prometheus-get-metrics, in the order the exposition lists them (by family name). */
const DEFINITIONS: readonly FamilyDefinition[] = [
  { name: 'cpu_idle_time_percent', type: 'gauge', help: 'CPU idle time in percent', source: 'cpu_idle' },
  { name: 'cpu_ncpu', type: 'gauge', help: 'Number of logical CPUs in the system', source: 'cpu_ncpu' },
  { name: 'cpu_other_time_percent', type: 'gauge', help: 'CPU other time in percent', source: 'cpu_other' },
  {
    name: 'cpu_system_time_percent',
    type: 'gauge',
    help: 'CPU system time in percent',
    source: 'cpu_system',
  },
  { name: 'cpu_user_time_percent', type: 'gauge', help: 'CPU user time in percent', source: 'cpu_user' },
  { name: 'disk_total_bytes', type: 'gauge', help: 'Total size of the disk in bytes', source: 'disk_total' },
  { name: 'disk_usage_bytes', type: 'gauge', help: 'Number of used bytes on the disk', source: 'disk_usage' },
  {
    name: 'ffmpeg_process',
    type: 'gauge',
    help: 'General stats per process',
    source: 'restream_process',
    rename: { processid: 'process' },
  },
  {
    name: 'ffmpeg_process_io',
    type: 'gauge',
    help: 'Stats per input and output of a process',
    source: 'restream_io',
    rename: { processid: 'process' },
    drop: ['address'],
  },
  {
    name: 'ffmpeg_process_states',
    type: 'gauge',
    help: 'Accumulated states per process',
    source: 'restream_process_states',
    rename: { processid: 'process' },
  },
  { name: 'ffmpeg_states', type: 'gauge', help: 'Current process states', source: 'restream_state' },
  {
    name: 'ffmpeg_states_total',
    type: 'counter',
    help: 'Accumulated process states',
    source: 'ffmpeg_process',
  },
  {
    name: 'filesystem_files',
    type: 'gauge',
    help: 'Number of files on the filesystem',
    source: 'filesystem_files',
  },
  {
    name: 'filesystem_limit_bytes',
    type: 'gauge',
    help: 'Size limit of the filesystem in bytes, negative if unlimited',
    source: 'filesystem_limit',
  },
  {
    name: 'filesystem_usage_bytes',
    type: 'gauge',
    help: 'Number of used bytes on the filesystem',
    source: 'filesystem_usage',
  },
  { name: 'mem_free_bytes', type: 'gauge', help: 'Free memory in bytes', source: 'mem_free' },
  { name: 'mem_total_bytes', type: 'gauge', help: 'Total available memory in bytes', source: 'mem_total' },
  { name: 'net_rx_bytes', type: 'gauge', help: 'Number of received bytes by interface', source: 'net_rx' },
  { name: 'net_tx_bytes', type: 'gauge', help: 'Number of sent bytes by interface', source: 'net_tx' },
  {
    name: 'session_active',
    type: 'gauge',
    help: 'Current number of active sessions by collector',
    source: 'session_active',
  },
  {
    name: 'session_rx_bytes',
    type: 'counter',
    help: 'Total received bytes by collector',
    source: 'session_rxbytes',
  },
  {
    name: 'session_total',
    type: 'counter',
    help: 'Total number of sessions by collector',
    source: 'session_total',
  },
  {
    name: 'session_tx_bytes',
    type: 'counter',
    help: 'Total sent bytes by collector',
    source: 'session_txbytes',
  },
  {
    name: 'uptime_seconds',
    type: 'counter',
    help: 'Number of seconds the core is up',
    source: 'uptime_uptime',
  },
];

/** An output label: its name and where its value comes from (`-1` = the `core` label). */
export interface FamilyLabel {
  name: string;
  sourceIndex: number;
}

/** A family ready to render. */
export interface PrometheusFamily {
  /** Sample name (both formats). */
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  /** Catalog index of the metric the samples come from. */
  metricIndex: number;
  /** Output labels sorted by name, `core` included. */
  labels: readonly FamilyLabel[];
  /**
   * How the family is declared in OpenMetrics, where a counter's family name is its sample name
   * without `_total`: a counter whose name does not end in `_total`, or whose stem is another
   * family's name, is declared `unknown` so that sample names stay the same in both formats.
   */
  openMetrics: { name: string; type: 'gauge' | 'counter' | 'unknown' };
}

/** The families of docs/metrics.md#prometheus-get-metrics with their label mapping resolved. */
export function prometheusFamilies(): PrometheusFamily[] {
  const names = new Set(DEFINITIONS.map((definition) => definition.name));
  return DEFINITIONS.map((definition) => {
    const metricIndex = METRIC_INDEX.get(definition.source)!;
    const catalogLabels: readonly string[] = CATALOG[metricIndex]!.labels;
    const labels: FamilyLabel[] = [{ name: 'core', sourceIndex: -1 }];
    catalogLabels.forEach((label, sourceIndex) => {
      if (definition.drop?.includes(label) === true) return;
      labels.push({ name: definition.rename?.[label] ?? label, sourceIndex });
    });
    labels.sort((a, b) => (a.name < b.name ? -1 : 1));
    return {
      name: definition.name,
      type: definition.type,
      help: definition.help,
      metricIndex,
      labels,
      openMetrics: openMetricsDeclaration(definition, names),
    };
  });
}

function openMetricsDeclaration(
  definition: FamilyDefinition,
  names: ReadonlySet<string>,
): PrometheusFamily['openMetrics'] {
  if (definition.type !== 'counter') return { name: definition.name, type: definition.type };
  const stem = definition.name.endsWith('_total') ? definition.name.slice(0, -'_total'.length) : undefined;
  if (stem !== undefined && !names.has(stem)) return { name: stem, type: 'counter' };
  return { name: definition.name, type: 'unknown' };
}
