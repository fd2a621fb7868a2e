export { registerProbeRoutes, ProbeSchema, type ProbeSource, type ProbeOptions } from './routes.js';
export { parseProbe, type ProbeStream } from './parse-probe.js';
