/** The contract between the shell and one screen of the dashboard. */
import type { ApiClient } from '../api.js';
import type { TimeWindow } from '../chart.js';
import { queryLatest, querySeries, type MetricsAnswer, type QueryItem } from '../metrics.js';
import { stepFor } from '../ranges.js';
import type { TimeRange } from '../ranges.js';

export interface ViewContext {
  api: ApiClient;
  range: TimeRange;
  /** The server's collection interval, seconds (from the last metrics answer). */
  collectionIntervalSec: number;
  /** Navigates to another screen (`#/process/<id>`). */
  navigate(hash: string): void;
}

export interface View {
  readonly title: string;
  readonly element: HTMLElement;
  /** Loads the screen's data for the context's range; called again at every refresh. */
  update(context: ViewContext): Promise<void>;
  destroy(): void;
}

/** Escapes a value for an exact RE2 label match (`^value$`). */
export function exactly(value: string): string {
  return `^${value.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')}$`;
}

/** The picked range ending now, for a chart's time axis. */
export function windowOf(context: ViewContext): TimeWindow {
  const to = Date.now() / 1000;
  return { from: to - context.range.seconds, to };
}

/** What most screens read: the latest values of some metrics, and some series over the picked range. */
export async function latestAndRange(
  context: ViewContext,
  latestItems: QueryItem[],
  seriesItems: QueryItem[],
): Promise<{ latest: MetricsAnswer; series: MetricsAnswer; window: TimeWindow }> {
  const step = stepFor(context.range.seconds, context.collectionIntervalSec);
  const window = windowOf(context);
  const [latest, series] = await Promise.all([
    queryLatest(context.api, latestItems),
    querySeries(context.api, seriesItems, context.range.seconds, step),
  ]);
  return { latest, series, window };
}

/** Query items for metrics by name, all their series. */
export function named(...names: string[]): QueryItem[] {
  return names.map((name) => ({ name }));
}
