export { MetricHistory, type HistoryOptions } from './metric-history.js';
export { pointsBetween, type Tier, type TierOptions, type TierPiece, type TierSeries } from './tier.js';
export { describeSeries, seriesKind, type SeriesInfo, type SeriesKind } from './series-kind.js';
