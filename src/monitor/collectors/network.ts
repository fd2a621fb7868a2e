import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Collector } from './collector.js';
import { parseNetDev } from './parse/index.js';

/** `net_rx{interface}` and `net_tx{interface}`: bytes since boot per interface, loopback included (docs/metrics.md#what-each-value-means). */
export function createNetworkCollector(deps: { procRoot: string }): Collector {
  return {
    name: 'network',
    async collect(emit) {
      for (const counters of parseNetDev(await readFile(join(deps.procRoot, 'net', 'dev'), 'utf8'))) {
        emit('net_rx', [counters.name], counters.rxBytes);
        emit('net_tx', [counters.name], counters.txBytes);
      }
    },
  };
}
