export { registerProbeRoutes, type ProbeSource, type ProbeOptions } from './routes.js';
export { parseProbe } from './parse-probe.js';
export { PROBE_DOCS, type ProbeStream } from './contract.js';
