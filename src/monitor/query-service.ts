import type { Config } from '../config/index.js';
import type { MetricHistory } from './history/index.js';
import { MetricsQueryService } from './query/index.js';
import { CATALOG, type MetricStore } from './store/index.js';

/**
 * The query service of `POST /api/v3/metrics` over `store` with the config's retention and
 * bounds: the monitor's, and each API worker's over its replica of the store (replica.ts), so
 * both answer a body with the same bytes.
 */
export function createQueryService(
  config: Config,
  store: MetricStore,
  history: MetricHistory | undefined,
): MetricsQueryService {
  const metrics = config.metrics;
  return new MetricsQueryService(
    metrics.enable ? store : undefined,
    { rangeSec: metrics.range_sec, intervalSec: metrics.interval_sec },
    {
      maxItems: metrics.query.max_items,
      maxPatternLength: metrics.query.max_pattern_length,
      maxTotalPatternLength: metrics.query.max_total_pattern_length,
      maxProgramSize: metrics.query.max_program_size,
      maxTimeMs: metrics.query.max_time_ms,
    },
    undefined,
    history,
  );
}

/** Snapshots the store keeps: `floor(range_sec / interval_sec)`, one when collection is off. */
export function storeCapacityOf(config: Config): number {
  const metrics = config.metrics;
  return metrics.enable ? Math.floor(metrics.range_sec / metrics.interval_sec) : 1;
}

/** `GET /api/v3/metrics`: the catalog sorted by name, as JSON text (it never changes). */
export const CATALOG_JSON: string = JSON.stringify(
  [...CATALOG]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map(({ name, description, labels }) => ({ name, description, labels: [...labels] })),
);
