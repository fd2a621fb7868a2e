/**
 * The metric catalog of docs/metrics.md#catalog: 29 metrics with their exact names, descriptions and label names
 * (label order as listed). Collectors emit label values in this order.
 */
export const CATALOG = [
  { name: 'cpu_idle', description: 'Percentage of idle CPU', labels: [] },
  { name: 'cpu_ncpu', description: 'Number of logical CPUs in the system', labels: [] },
  { name: 'cpu_other', description: 'Percentage of CPU used for other subsystems', labels: [] },
  { name: 'cpu_system', description: 'Percentage of CPU used for the system', labels: [] },
  { name: 'cpu_user', description: 'Percentage of CPU used for the user', labels: [] },
  { name: 'disk_total', description: 'Total size of the disk in bytes', labels: ['path'] },
  { name: 'disk_usage', description: 'Number of used bytes on the disk', labels: ['path'] },
  {
    name: 'ffmpeg_process',
    description: 'Accumulated state changes of all ffmpeg processes',
    labels: ['state'],
  },
  {
    name: 'filesystem_files',
    description: 'Number of files on the filesystem (excluding directories)',
    labels: ['name'],
  },
  {
    name: 'filesystem_limit',
    description: 'Total size of the filesystem in bytes, negative if unlimited',
    labels: ['name'],
  },
  { name: 'filesystem_usage', description: 'Number of used bytes on the filesystem', labels: ['name'] },
  { name: 'mem_free', description: 'Free memory in bytes', labels: [] },
  { name: 'mem_total', description: 'Total available memory in bytes', labels: [] },
  { name: 'net_rx', description: 'Number of received bytes', labels: ['interface'] },
  { name: 'net_tx', description: 'Number of transmitted bytes', labels: ['interface'] },
  {
    name: 'restream_io',
    description: 'Current process IO values by name',
    labels: ['processid', 'type', 'id', 'address', 'index', 'stream', 'media', 'name'],
  },
  {
    name: 'restream_process',
    description: 'Current process values by name',
    labels: ['processid', 'state', 'order', 'name'],
  },
  { name: 'restream_process_states', description: 'Current process state', labels: ['processid', 'state'] },
  { name: 'restream_state', description: 'Summarized current process states', labels: ['state'] },
  { name: 'session_active', description: 'Number of current sessions', labels: ['collector'] },
  { name: 'session_limit', description: 'Max. number of concurrent sessions', labels: ['collector'] },
  {
    name: 'session_maxrxbitrate',
    description: 'Max. allowed receiving bitrate in bit per second',
    labels: ['collector'],
  },
  {
    name: 'session_maxtxbitrate',
    description: 'Max. allowed transmitting bitrate in bit per second',
    labels: ['collector'],
  },
  {
    name: 'session_rxbitrate',
    description: 'Current receiving bitrate in bit per second',
    labels: ['collector'],
  },
  { name: 'session_rxbytes', description: 'Number of received bytes', labels: ['collector'] },
  { name: 'session_total', description: 'Total sessions', labels: ['collector'] },
  {
    name: 'session_txbitrate',
    description: 'Current transmitting bitrate in bit per second',
    labels: ['collector'],
  },
  { name: 'session_txbytes', description: 'Number of transmitted bytes', labels: ['collector'] },
  { name: 'uptime_uptime', description: 'Current uptime in seconds', labels: [] },
] as const satisfies readonly MetricDescriptor[];

export interface MetricDescriptor {
  readonly name: string;
  readonly description: string;
  readonly labels: readonly string[];
}

export type MetricName = (typeof CATALOG)[number]['name'];

/** The six process states of docs/processes.md#states-orders-and-supervision, in the order the state-counter series are emitted. */
export const PROCESS_STATES = ['finished', 'starting', 'running', 'finishing', 'failed', 'killed'] as const;
export type ProcessState = (typeof PROCESS_STATES)[number];
