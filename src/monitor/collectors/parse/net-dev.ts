/** Byte counters of one network interface since boot. */
export interface InterfaceCounters {
  name: string;
  rxBytes: number;
  txBytes: number;
}

/**
 * Parses /proc/net/dev: two header lines, then `name: rx_bytes rx_packets … (8 receive columns)
 * tx_bytes …`. Every interface, loopback included, in file order. Lines that do not fit are skipped.
 */
export function parseNetDev(text: string): InterfaceCounters[] {
  const interfaces: InterfaceCounters[] = [];
  for (const line of text.split('\n')) {
    const colon = line.lastIndexOf(':');
    if (colon < 0 || line.includes('|')) continue;
    const name = line.slice(0, colon).trim();
    const columns = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    const rxBytes = columns[0];
    const txBytes = columns[8];
    if (name === '' || rxBytes === undefined || txBytes === undefined) continue;
    if (!Number.isFinite(rxBytes) || !Number.isFinite(txBytes)) continue;
    interfaces.push({ name, rxBytes, txBytes });
  }
  return interfaces;
}
