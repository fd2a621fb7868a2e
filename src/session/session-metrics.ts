import type { Collector } from '../monitor/index.js';
import type { SessionCollector } from './session-collector.js';

/** `session_*{collector}` for every session collector (docs/metrics.md#catalog, docs/sessions.md#the-contract). */
export function createSessionMetricsCollector(collectors: readonly SessionCollector[]): Collector {
  return {
    name: 'session',
    collect(emit) {
      for (const collector of collectors) {
        const stats = collector.stats();
        const labels = [collector.name];
        emit('session_active', labels, stats.active);
        emit('session_limit', labels, stats.limit);
        emit('session_maxrxbitrate', labels, stats.maxRxBitrate);
        emit('session_maxtxbitrate', labels, stats.maxTxBitrate);
        emit('session_rxbitrate', labels, stats.rxBitrate);
        emit('session_txbitrate', labels, stats.txBitrate);
        emit('session_rxbytes', labels, stats.rxBytes);
        emit('session_txbytes', labels, stats.txBytes);
        emit('session_total', labels, stats.total);
      }
    },
  };
}
