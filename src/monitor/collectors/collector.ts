import type { MetricName } from '../store/index.js';

/**
 * Hands one sample to the store. `labelValues` are the values of the metric's labels in catalog
 * order (docs/metrics.md#catalog); the store copies what it keeps, so a collector may reuse the array.
 */
export type Emit = (metric: MetricName, labelValues: readonly string[], value: number) => void;

/**
 * A collector is one topic (cpu, memory, process, …) that produces samples for several metrics.
 * It is called once per collection tick. It may throw or reject: the scheduler logs that, counts
 * it, and keeps the samples of the other collectors (docs/metrics.md#catalog "every collector is independent").
 */
export interface Collector {
  /** Short stable name used in logs, e.g. `cpu`, `restream`. */
  readonly name: string;
  collect(emit: Emit): void | Promise<void>;
}
