export { MetricHistory, type HistoryOptions } from './metric-history.js';
export { type Tier, type TierOptions } from './tier.js';
export { pointsBetween, type TierPiece, type TierSeries } from './tier-piece.js';
export { describeSeries, seriesKind, type SeriesInfo, type SeriesKind } from './series-kind.js';
