/** One process: its figures, charts of fps, bitrate, CPU and memory, and its last log lines. */
import { lineChart, type Chart } from '../chart.js';
import { h, replace, stat } from '../dom.js';
import { formatBitrate, formatBytes, formatDuration, formatNumber, formatPercent } from '../format.js';
import { align, pick, querySeries } from '../metrics.js';
import { stepFor } from '../ranges.js';
import type { ProcessSummary } from './processes.js';
import { exactly, windowOf, type View, type ViewContext } from './view.js';

interface Report {
  log?: [string, string][];
}

const CHARTS: { name: string; title: string; format: (value: number) => string }[] = [
  { name: 'fps', title: 'Frames per second', format: (v) => formatNumber(v, 1) },
  { name: 'bitrate', title: 'Bitrate', format: formatBitrate },
  { name: 'cpu', title: 'CPU', format: formatPercent },
  { name: 'memory', title: 'Memory', format: formatBytes },
];

export function processDetailView(id: string): View {
  const stats = h('section', { class: 'stats' });
  const charts = h('section', { class: 'charts' });
  const log = h('pre', { class: 'log', tabindex: 0, 'aria-label': 'Last log lines' });
  const element = h(
    'div',
    { class: 'view process-detail' },
    h('p', {}, h('a', { href: '#/processes' }, '← all processes')),
    h('h2', {}, id),
    stats,
    charts,
    h('h3', {}, 'Last log lines'),
    log,
  );
  const drawn: Chart[] = CHARTS.map((chart) =>
    lineChart(
      { title: chart.title, series: [{ label: chart.name }], format: chart.format },
      { times: [], columns: [[]] },
    ),
  );
  charts.append(...drawn.map((chart) => chart.element));

  return {
    title: `Process ${id}`,
    element,
    async update(context: ViewContext) {
      const path = `/api/v3/process/${encodeURIComponent(id)}`;
      const step = stepFor(context.range.seconds, context.collectionIntervalSec);
      const window = windowOf(context);
      const [process, report, series] = await Promise.all([
        context.api.request<ProcessSummary>('GET', `${path}?filter=state`),
        context.api.request<Report>('GET', `${path}/report`),
        querySeries(
          context.api,
          [
            {
              name: 'restream_process',
              labels: { processid: exactly(id), name: `^(${CHARTS.map((c) => c.name).join('|')})$` },
            },
          ],
          context.range.seconds,
          step,
        ),
      ]);
      const state = process.state;
      replace(
        stats,
        stat('State', state?.exec ?? '–', 'state'),
        stat('Order', state?.order ?? '–', 'order'),
        stat('fps', formatNumber(state?.progress?.fps, 1), 'fps'),
        stat(
          'Speed',
          state?.progress?.speed === undefined ? '–' : `${formatNumber(state.progress.speed, 2)}×`,
          'speed',
        ),
        stat('Runtime', formatDuration(state?.runtime_seconds), 'runtime'),
      );
      CHARTS.forEach((chart, i) => {
        drawn[i]!.setData(
          align([pick(series, 'restream_process', { name: chart.name })[0]?.values ?? []]),
          window,
        );
      });
      const lines = (report.log ?? []).slice(-50);
      log.textContent = lines
        .map(([time, line]) => `${new Date(Number(time) * 1000).toLocaleTimeString()}  ${line}`)
        .join('\n');
    },
    destroy() {
      for (const chart of drawn) chart.destroy();
    },
  };
}
