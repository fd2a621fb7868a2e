/** Storage: the disk and memory filesystems' usage against their limits, and the disk's usage over time. */
import { lineChart } from '../chart.js';
import { h, replace } from '../dom.js';
import { formatBytes, formatNumber } from '../format.js';
import { align, latestOf, pick } from '../metrics.js';
import { latestAndRange, named, type View, type ViewContext } from './view.js';

const FILESYSTEMS = [
  { name: 'diskfs', label: 'Disk filesystem' },
  { name: 'memfs', label: 'Memory filesystem' },
];

export function storageView(): View {
  const meters = h('section', { class: 'meters' });
  const usage = lineChart(
    {
      title: 'Filesystem usage',
      series: FILESYSTEMS.map((fs) => ({ label: fs.label })),
      format: formatBytes,
    },
    { times: [], columns: [[], []] },
  );
  const element = h(
    'div',
    { class: 'view storage' },
    meters,
    h('section', { class: 'charts' }, usage.element),
  );

  return {
    title: 'Storage',
    element,
    async update(context: ViewContext) {
      const { latest, series, window } = await latestAndRange(
        context,
        named('filesystem_usage', 'filesystem_limit', 'filesystem_files', 'disk_usage', 'disk_total'),
        named('filesystem_usage'),
      );
      replace(
        meters,
        ...FILESYSTEMS.map(({ name, label }) => {
          const used = latestOf(latest, 'filesystem_usage', { name });
          const limit = latestOf(latest, 'filesystem_limit', { name });
          const files = latestOf(latest, 'filesystem_files', { name });
          return meter(
            label,
            name,
            used,
            limit === undefined || limit < 0 ? undefined : limit,
            `${formatNumber(files)} files`,
          );
        }),
        meter(
          'Disk (whole volume)',
          'disk',
          latestOf(latest, 'disk_usage'),
          latestOf(latest, 'disk_total'),
          '',
        ),
      );
      usage.setData(
        align(FILESYSTEMS.map(({ name }) => pick(series, 'filesystem_usage', { name })[0]?.values ?? [])),
        window,
      );
    },
    destroy() {
      usage.destroy();
    },
  };
}

/** A usage bar; without a limit the bar is left out and the text says "no limit". */
function meter(
  label: string,
  key: string,
  used: number | undefined,
  limit: number | undefined,
  extra: string,
): HTMLElement {
  const text = `${formatBytes(used)} of ${limit === undefined ? 'no limit' : formatBytes(limit)}${extra === '' ? '' : ` · ${extra}`}`;
  return h(
    'div',
    { class: 'meter', 'data-meter': key },
    h('span', {}, label),
    limit === undefined || used === undefined
      ? null
      : h('progress', { max: limit, value: used, 'aria-label': label }),
    h('strong', { 'data-field': 'usage' }, text),
  );
}
