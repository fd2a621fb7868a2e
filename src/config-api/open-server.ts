import { isIPv4, isIPv6 } from 'node:net';
import { resolveBindAddress, type Config } from '../config/index.js';

/**
 * A problem when a change over the API would serve the API without authentication beyond this
 * machine (after the next start): the key it changed, and how to get what was meant safely.
 * An open server that the file already asked for (an operator's choice, warned about at every
 * start) is not the API's doing, and changes of other keys pass. `current` is the stored
 * configuration (file + env), `next` the one the change would store.
 */
export function openServerProblems(current: Config, next: Config): string[] {
  if (!isOpen(next)) return [];
  const addressChanged = next.address !== current.address;
  if (!addressChanged && next.api.auth.enable === current.api.auth.enable) return [];
  const where = `"${next.address}" listens beyond loopback`;
  const fix = 'turn on api.auth.enable, or listen on loopback (":port" does while authentication is off)';
  return [
    addressChanged
      ? `address: ${where} while api.auth.enable is false: anyone on the network could use the API; ${fix}`
      : `api.auth.enable: must stay true while address ${where}: anyone on the network could use the API; ${fix}`,
  ];
}

function isOpen(config: Config): boolean {
  return !config.api.auth.enable && !isLoopbackHost(resolveBindAddress(config).host);
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`; any other name may resolve anywhere. */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower === 'localhost.') return true;
  if (isIPv4(lower)) return lower.startsWith('127.');
  if (!isIPv6(lower)) return false;
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped !== null && (mapped[1] ?? '').startsWith('127.');
}
