/**
 * monitor/store: what a snapshot of metrics is made of and where it is kept. The catalog of
 * metric names and labels, the sample batches collectors emit, and the store of the recent
 * snapshots (typed-array rows) that the query, the exposition and the history read.
 */
export * from './catalog.js';
export * from './sample-batch.js';
export * from './store.js';
export * from './value-rows.js';
