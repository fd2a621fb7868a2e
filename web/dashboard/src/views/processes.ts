/** Processes: every process with its state, fps, bitrate, speed and runtime, and an fps sparkline. */
import { sparkline, type Chart } from '../chart.js';
import { h, replace } from '../dom.js';
import { formatDuration, formatNumber } from '../format.js';
import { align, pick, querySeries } from '../metrics.js';
import { stepFor } from '../ranges.js';
import type { View, ViewContext } from './view.js';

/** The part of `GET /api/v3/process` the dashboard reads. */
export interface ProcessSummary {
  id: string;
  reference: string;
  state?: {
    order: string;
    exec: string;
    runtime_seconds: number;
    last_logline?: string;
    progress?: { fps?: number; bitrate_kbit?: number; speed?: number };
  };
}

export function processesView(): View {
  const body = h('tbody');
  const empty = h('p', { class: 'empty', hidden: true }, 'No processes yet.');
  const table = h(
    'table',
    { class: 'processes' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Process', 'State', 'fps', 'Bitrate', 'Speed', 'Runtime', 'fps over time'].map((label) =>
          h('th', { scope: 'col' }, label),
        ),
      ),
    ),
    body,
  );
  const element = h('div', { class: 'view processes' }, h('div', { class: 'table-scroll' }, table), empty);
  let sparklines: Chart[] = [];

  return {
    title: 'Processes',
    element,
    async update(context: ViewContext) {
      const step = stepFor(context.range.seconds, context.collectionIntervalSec);
      const [list, fps] = await Promise.all([
        context.api.request<ProcessSummary[]>('GET', '/api/v3/process?filter=state'),
        querySeries(
          context.api,
          [{ name: 'restream_process', labels: { name: '^fps$' } }],
          context.range.seconds,
          step,
        ),
      ]);
      for (const chart of sparklines) chart.destroy();
      sparklines = [];
      empty.hidden = list.length > 0;
      replace(
        body,
        ...list.map((process) => {
          const progress = process.state?.progress;
          const history = pick(fps, 'restream_process', { processid: process.id }).flatMap((s) => [s.values]);
          const spark = sparkline(`fps of ${process.id}`, align(history.length > 0 ? [history[0]!] : [[]]));
          sparklines.push(spark);
          const link = h('a', { href: `#/process/${encodeURIComponent(process.id)}` }, process.id);
          return h(
            'tr',
            { 'data-process': process.id },
            h(
              'th',
              { scope: 'row' },
              link,
              process.reference === '' ? null : h('small', {}, process.reference),
            ),
            h(
              'td',
              { class: `state state-${process.state?.exec ?? 'unknown'}`, 'data-field': 'state' },
              process.state?.exec ?? '–',
            ),
            h('td', { 'data-field': 'fps' }, formatNumber(progress?.fps, 1)),
            h(
              'td',
              { 'data-field': 'bitrate' },
              progress?.bitrate_kbit === undefined ? '–' : `${formatNumber(progress.bitrate_kbit)} kbit/s`,
            ),
            h(
              'td',
              { 'data-field': 'speed' },
              progress?.speed === undefined ? '–' : `${formatNumber(progress.speed, 2)}×`,
            ),
            h('td', { 'data-field': 'runtime' }, formatDuration(process.state?.runtime_seconds)),
            h('td', {}, spark.element),
          );
        }),
      );
    },
    destroy() {
      for (const chart of sparklines) chart.destroy();
    },
  };
}
