export { SrtServer, type SrtServerOptions } from './server.js';
export { SrtConnection } from './connection.js';
export { loadSrtAddon, type SrtAddon } from './native.js';
export { SRT_STATISTICS_FIELDS, SrtChannels, SrtStatistics } from './contract.js';
