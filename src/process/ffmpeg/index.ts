export { LineSplitter, TRUNCATION_MARK } from './line-splitter.js';
export { maskCredentials, stripLogPrefixes } from './log-line.js';
export { PreludeParser, type Prelude, type PreludeStream, type StreamMapping } from './prelude.js';
export { ProgressBlockParser, type ProgressBlock } from './progress-block.js';
export { parseSize, parseStatsLine, parseTime, type StatsLine } from './stats-line.js';
export { parseVstatsLine, type VstatsLine } from './vstats.js';
