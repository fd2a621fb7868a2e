import type { LabelPattern } from './label-pattern.js';
import { CATALOG, METRIC_INDEX } from '../store/index.js';
import type { MetricsQuery, QueryItem } from './parse.js';

/** One label selector: the label's position in the series' label values, and its pattern (`undefined` = any value). */
export interface Selector {
  labelIndex: number;
  regexp: LabelPattern | undefined;
}

/** One compiled item: every selector must match. */
interface Matcher {
  selectors: readonly Selector[];
}

/**
 * The compiled label selection of a query: per catalog metric, the items that name it (OR-ed), or
 * `undefined` when the query does not ask for that metric.
 */
export class SeriesSelection {
  private readonly byMetric: (Matcher[] | undefined)[];

  constructor(byMetric: (Matcher[] | undefined)[]) {
    this.byMetric = byMetric;
  }

  /** Does the query ask for this metric at all? */
  wantsMetric(metricIndex: number): boolean {
    return this.byMetric[metricIndex] !== undefined;
  }

  /** Does the query ask for every series of this metric (an item for it without labels)? */
  wantsAll(metricIndex: number): boolean {
    return this.byMetric[metricIndex]?.some((matcher) => matcher.selectors.length === 0) ?? false;
  }

  /**
   * The only selector of the only item for this metric, when the query asks for the metric that
   * way (one item with one label pattern: what a label selection mostly is); otherwise undefined.
   */
  onlySelector(metricIndex: number): Selector | undefined {
    const matchers = this.byMetric[metricIndex];
    if (matchers?.length !== 1) return undefined;
    const selectors = matchers[0]!.selectors;
    return selectors.length === 1 ? selectors[0] : undefined;
  }

  /** Does a series of `metricIndex` with these label values match any item for its metric? */
  matches(metricIndex: number, labelValues: readonly string[]): boolean {
    const matchers = this.byMetric[metricIndex];
    if (matchers === undefined) return false;
    return matchers.some((matcher) => matchesAll(matcher, labelValues));
  }

  /** Selection of every series of every metric (a time-series query with an empty `metrics` list). */
  static all(): SeriesSelection {
    return new SeriesSelection(CATALOG.map(() => [{ selectors: [] }]));
  }
}

function matchesAll(matcher: Matcher, labelValues: readonly string[]): boolean {
  for (const { labelIndex, regexp } of matcher.selectors) {
    // A label the metric does not have matches nothing (docs/metrics.md#post-apiv3metrics-the-query).
    if (labelIndex < 0) return false;
    // Unanchored: the pattern must match somewhere in the value; an empty pattern matches anything.
    if (regexp !== undefined && !regexp.test(labelValues[labelIndex] ?? '')) return false;
  }
  return true;
}

/**
 * The selection of a query's items (patterns compiled by the parser). Names not in the catalog
 * match nothing (newer clients may ask for newer metrics).
 */
export function compileSelection(items: readonly QueryItem[]): SeriesSelection {
  const byMetric: (Matcher[] | undefined)[] = CATALOG.map(() => undefined);
  for (const item of items) {
    const metricIndex = METRIC_INDEX.get(item.name);
    if (metricIndex === undefined) continue;
    const labels = CATALOG[metricIndex]!.labels as readonly string[];
    const selectors = item.labels.map(({ label, regexp }) => ({ labelIndex: labels.indexOf(label), regexp }));
    (byMetric[metricIndex] ??= []).push({ selectors });
  }
  return new SeriesSelection(byMetric);
}

/**
 * The series a parsed query asks for: its items, or every series for a time-series query with an
 * empty `metrics` list (docs/metrics.md#post-apiv3metrics-the-query).
 */
export function selectionOf(query: MetricsQuery): SeriesSelection {
  return query.timerangeSec !== undefined && query.items.length === 0
    ? SeriesSelection.all()
    : compileSelection(query.items);
}
