export { CATALOG, CATALOG_BY_NAME, PROCESS_STATES, type MetricName, type ProcessState } from './catalog.js';
export type { Collector, Emit } from './collector.js';
export { Monitor, type MonitorDeps } from './monitor.js';
export { MetricStore } from './store.js';
export { SampleBatch } from './sample-batch.js';
export { CollectionScheduler, type CollectorStats, type SchedulerOptions } from './scheduler.js';
export { registerMetricsApi, registerPrometheusEndpoint } from './http/routes.js';
