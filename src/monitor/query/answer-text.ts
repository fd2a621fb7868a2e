import { CATALOG } from '../store/index.js';

/**
 * The pieces of an answer's JSON text (docs/metrics.md#post-apiv3metrics-the-query) that every
 * fragment (series-fragments.ts, history-view.ts, assemble-answer.ts) is written from.
 */

/** Catalog indices in name order: the order of the answer. */
export const METRICS_IN_NAME_ORDER: readonly number[] = CATALOG.map((_, index) => index).sort((a, b) =>
  CATALOG[a]!.name < CATALOG[b]!.name ? -1 : 1,
);

/** Series between two looks at the clock. */
export const SERIES_PER_DEADLINE_CHECK = 64;

/**
 * `{"timerange_sec":…,"interval_sec":…,"metrics":[`: how every answer starts. `rangeSec` and
 * `intervalSec` are what the answer echoes: the configured raw window for answers from it, the
 * range and step used for answers from a history tier (docs/metrics.md).
 */
export function answerHead(echo: { rangeSec: number; intervalSec: number }): string {
  return `{"timerange_sec":${echo.rangeSec},"interval_sec":${echo.intervalSec},"metrics":[`;
}

/** `{"label":"value",…}` of a series, every label of its metric in catalog order. */
export function labelsJson(names: readonly string[], values: readonly string[]): string {
  let text = '{';
  for (let i = 0; i < names.length; i++) {
    text += `${i === 0 ? '' : ','}${JSON.stringify(names[i])}:${JSON.stringify(values[i] ?? '')}`;
  }
  return `${text}}`;
}
