/**
 * Viewers: active sessions and bandwidth per collector over the range, and traffic and sessions
 * per calendar day (last 30 days) and month (last 12 months), from the session counters.
 */
import { lineChart } from '../chart.js';
import { h, replace } from '../dom.js';
import { formatBitrate, formatBytes, formatNumber } from '../format.js';
import { align, latestOf, pick, querySeries, totalsPer, type MetricsAnswer } from '../metrics.js';
import { latestAndRange, named, type View, type ViewContext } from './view.js';

const COLLECTORS = ['hls', 'hlsingress', 'http', 'rtmp', 'srt'];
const LABELS: Record<string, string> = {
  hls: 'HLS',
  hlsingress: 'HLS ingest',
  http: 'HTTP',
  rtmp: 'RTMP',
  srt: 'SRT',
};
/** The day and month totals change slowly; they are fetched again at most this often. */
const TOTALS_EVERY_MS = 60_000;

export function viewersView(): View {
  const current = h('tbody');
  const days = h('tbody');
  const months = h('tbody');
  const active = lineChart(
    {
      title: 'Active sessions',
      series: COLLECTORS.map((c) => ({ label: LABELS[c]! })),
      format: (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1)),
    },
    { times: [], columns: COLLECTORS.map(() => []) },
  );
  const bandwidth = lineChart(
    {
      title: 'Sent bandwidth',
      series: COLLECTORS.map((c) => ({ label: LABELS[c]! })),
      format: formatBitrate,
    },
    { times: [], columns: COLLECTORS.map(() => []) },
  );
  const element = h(
    'div',
    { class: 'view viewers' },
    table(
      ['Collector', 'Active', 'Sent', 'Received', 'Sessions in total', 'Sent in total'],
      current,
      'viewers-now',
    ),
    h('section', { class: 'charts' }, active.element, bandwidth.element),
    h('h3', {}, 'Per day (last 30 days)'),
    table(['Day', ...COLLECTORS.map((c) => `${LABELS[c]} sessions / sent`)], days, 'viewers-days'),
    h('h3', {}, 'Per month (last 12 months)'),
    table(['Month', ...COLLECTORS.map((c) => `${LABELS[c]} sessions / sent`)], months, 'viewers-months'),
  );
  let totalsFetchedAt = 0;

  return {
    title: 'Viewers',
    element,
    async update(context: ViewContext) {
      const { latest, series, window } = await latestAndRange(
        context,
        named('session_active', 'session_txbitrate', 'session_rxbitrate', 'session_total', 'session_txbytes'),
        named('session_active', 'session_txbitrate'),
      );
      replace(
        current,
        ...COLLECTORS.map((collector) =>
          h(
            'tr',
            { 'data-collector': collector },
            h('th', { scope: 'row' }, LABELS[collector]),
            h(
              'td',
              { 'data-field': 'active' },
              formatNumber(latestOf(latest, 'session_active', { collector })),
            ),
            h('td', {}, formatBitrate(latestOf(latest, 'session_txbitrate', { collector }))),
            h('td', {}, formatBitrate(latestOf(latest, 'session_rxbitrate', { collector }))),
            h(
              'td',
              { 'data-field': 'total' },
              formatNumber(latestOf(latest, 'session_total', { collector })),
            ),
            h('td', {}, formatBytes(latestOf(latest, 'session_txbytes', { collector }))),
          ),
        ),
      );
      const byCollector = (name: string) =>
        COLLECTORS.map((collector) => pick(series, name, { collector })[0]?.values ?? []);
      active.setData(align(byCollector('session_active')), window);
      bandwidth.setData(align(byCollector('session_txbitrate')), window);
      if (Date.now() - totalsFetchedAt >= TOTALS_EVERY_MS) {
        totalsFetchedAt = Date.now();
        const counters = named('session_total', 'session_txbytes');
        const [daily, monthly] = await Promise.all([
          querySeries(context.api, counters, 30 * 86_400, 3600),
          querySeries(context.api, counters, 365 * 86_400, 86_400),
        ]);
        replace(days, ...periodRows('day', daily));
        replace(months, ...periodRows('month', monthly));
      }
    },
    destroy() {
      active.destroy();
      bandwidth.destroy();
    },
  };
}

function table(headings: string[], body: HTMLElement, name: string): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { 'data-table': name },
      h('thead', {}, h('tr', {}, ...headings.map((label) => h('th', { scope: 'col' }, label)))),
      body,
    ),
  );
}

/** Rows of sessions and sent bytes per period, newest first. */
function periodRows(period: 'day' | 'month', answer: MetricsAnswer): HTMLElement[] {
  const sessions = totalsByCollector(period, answer, 'session_total');
  const sent = totalsByCollector(period, answer, 'session_txbytes');
  const labels = [...new Set(sessions.flatMap((m) => [...m.keys()]))].sort().reverse();
  return labels.map((label) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, label),
      ...COLLECTORS.map((_, i) =>
        h(
          'td',
          {},
          `${formatNumber(sessions[i]!.get(label) ?? 0)} / ${formatBytes(sent[i]!.get(label) ?? 0)}`,
        ),
      ),
    ),
  );
}

/** Per collector, a counter's growth per period label. */
function totalsByCollector(
  period: 'day' | 'month',
  answer: MetricsAnswer,
  name: string,
): Map<string, number>[] {
  return COLLECTORS.map((collector) => {
    const values = pick(answer, name, { collector })[0]?.values ?? [];
    return new Map(totalsPer(period, values).map((total) => [total.label, total.total]));
  });
}
