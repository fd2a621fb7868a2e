export { CATALOG, PROCESS_STATES, type MetricName, type ProcessState } from './store/index.js';
export type { Collector, Emit } from './collectors/collector.js';
export { Monitor, type MonitorDeps } from './monitor.js';
export { MetricStore } from './store/index.js';
export { SampleBatch } from './store/index.js';
export { CollectionScheduler, type CollectorStats, type SchedulerOptions } from './scheduler.js';
export { registerMetricsApi, registerPrometheusEndpoint } from './http/routes.js';
export { METRICS_DOCS } from './http/contract.js';
export { MetricReplica, ReplicaFeed, type SnapshotMessage } from './replica.js';
