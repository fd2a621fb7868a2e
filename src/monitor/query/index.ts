export { MetricsQueryService, DISABLED_ANSWER } from './metrics-query.js';
export { QueryError, parseMetricsQuery, type MetricsQuery, type QueryLimits } from './parse.js';
export { QueryTimeoutError } from './deadline.js';
export { formatNumber } from './format-number.js';
export { toUnixSeconds, type Retention } from './point-plan.js';
