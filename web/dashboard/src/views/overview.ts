/** Overview: the host's CPU, memory, disk and network, uptime, and the processes' states. */
import { lineChart, type Chart } from '../chart.js';
import { h, replace, stat } from '../dom.js';
import { formatBitrate, formatBytes, formatDuration, formatNumber, formatPercent } from '../format.js';
import { align, latestOf, pick, rateOf, type MetricsAnswer } from '../metrics.js';
import { latestAndRange, named, type View, type ViewContext } from './view.js';

const STATES = ['running', 'starting', 'finishing', 'finished', 'failed', 'killed'];

export function overviewView(): View {
  const stats = h('section', { class: 'stats', 'aria-label': 'Current values' });
  const states = h('section', { class: 'stats states', 'aria-label': 'Process states' });
  const charts = h('section', { class: 'charts' });
  const element = h('div', { class: 'view overview' }, stats, states, charts);
  const cpu = lineChart(
    {
      title: 'CPU',
      series: [{ label: 'user' }, { label: 'system' }, { label: 'other' }],
      format: formatPercent,
    },
    { times: [], columns: [[], [], []] },
  );
  const memory = lineChart(
    { title: 'Memory used', series: [{ label: 'used' }, { label: 'total' }], format: formatBytes },
    { times: [], columns: [[], []] },
  );
  const network = lineChart(
    { title: 'Network', series: [{ label: 'received' }, { label: 'sent' }], format: formatBitrate },
    { times: [], columns: [[], []] },
  );
  const disk = lineChart(
    { title: 'Disk used', series: [{ label: 'used' }, { label: 'total' }], format: formatBytes },
    { times: [], columns: [[], []] },
  );
  const all: Chart[] = [cpu, memory, network, disk];
  charts.append(...all.map((chart) => chart.element));

  return {
    title: 'Overview',
    element,
    async update(context: ViewContext) {
      const { latest, series, window } = await latestAndRange(
        context,
        named(
          'cpu_idle',
          'cpu_ncpu',
          'mem_total',
          'mem_free',
          'disk_total',
          'disk_usage',
          'uptime_uptime',
          'restream_state',
        ),
        named(
          'cpu_user',
          'cpu_system',
          'cpu_other',
          'mem_total',
          'mem_free',
          'net_rx',
          'net_tx',
          'disk_usage',
          'disk_total',
        ),
      );
      showStats(stats, states, latest);
      cpu.setData(
        align(['cpu_user', 'cpu_system', 'cpu_other'].map((name) => pick(series, name)[0]?.values ?? [])),
        window,
      );
      const total = pick(series, 'mem_total')[0]?.values ?? [];
      const free = new Map(pick(series, 'mem_free')[0]?.values ?? []);
      memory.setData(
        align([total.map(([t, v]) => [t, v - (free.get(t) ?? v)] as [number, number]), total]),
        window,
      );
      network.setData(align([networkRate(series, 'net_rx'), networkRate(series, 'net_tx')]), window);
      disk.setData(
        align([pick(series, 'disk_usage')[0]?.values ?? [], pick(series, 'disk_total')[0]?.values ?? []]),
        window,
      );
    },
    destroy() {
      for (const chart of all) chart.destroy();
    },
  };
}

function showStats(stats: HTMLElement, states: HTMLElement, latest: MetricsAnswer): void {
  const idle = latestOf(latest, 'cpu_idle');
  const memTotal = latestOf(latest, 'mem_total');
  const memFree = latestOf(latest, 'mem_free');
  replace(
    stats,
    stat('CPU used', formatPercent(idle === undefined ? undefined : 100 - idle), 'cpu'),
    stat('CPUs', formatNumber(latestOf(latest, 'cpu_ncpu'), 1), 'ncpu'),
    stat(
      'Memory used',
      `${formatBytes(memTotal === undefined || memFree === undefined ? undefined : memTotal - memFree)} of ${formatBytes(memTotal)}`,
      'memory',
    ),
    stat(
      'Disk used',
      `${formatBytes(latestOf(latest, 'disk_usage'))} of ${formatBytes(latestOf(latest, 'disk_total'))}`,
      'disk',
    ),
    stat('Uptime', formatDuration(latestOf(latest, 'uptime_uptime')), 'uptime'),
  );
  replace(
    states,
    ...STATES.map((state) =>
      stat(
        `Processes ${state}`,
        formatNumber(latestOf(latest, 'restream_state', { state })),
        `state-${state}`,
      ),
    ),
  );
}

/** Bits per second summed over every interface but loopback. */
function networkRate(series: MetricsAnswer, name: string): [number, number][] {
  const sums = new Map<number, number>();
  for (const one of pick(series, name)) {
    if (one.labels.interface === 'lo') continue;
    for (const [time, value] of rateOf(one.values, 8)) sums.set(time, (sums.get(time) ?? 0) + value);
  }
  return [...sums].sort((a, b) => a[0] - b[0]);
}
