import type { Collector } from './collector.js';

/** `uptime_uptime`: seconds since the server started (fractional), from the app's clock. */
export function createUptimeCollector(deps: { now: () => number; startedAtMs: number }): Collector {
  return {
    name: 'uptime',
    collect(emit) {
      emit('uptime_uptime', [], Math.max(0, deps.now() - deps.startedAtMs) / 1000);
    },
  };
}
