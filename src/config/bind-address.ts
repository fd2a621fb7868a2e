import type { Config } from './schema.js';
import { parseListenAddress } from './validate.js';

/** Where a listener binds, and why. */
export interface BindAddress {
  host: string;
  port: number;
  /**
   * True when the address named no host and nothing protects the listener (no authentication, no
   * token), so it binds to loopback instead of every interface (docs/configuration.md#safe-first-start-differs-from-the-reference).
   */
  narrowedToLoopback: boolean;
}

/**
 * Resolves a listen address (`host:port` or `:port`) to a bind host and port, or undefined when it
 * does not parse. `:port` means every interface only while the listener is protected; otherwise
 * it means loopback, so an open listener is not reachable from the network unless its address
 * names a host on purpose (e.g. `0.0.0.0:1935`). The empty host of a protected listener stays
 * empty: each listener knows what "every interface" is for it (dual-stack `::` for TCP).
 */
export function resolveListenAddress(address: string, isProtected: boolean): BindAddress | undefined {
  const parsed = parseListenAddress(address);
  if (parsed === undefined) return undefined;
  if (parsed.host !== '' || isProtected) return { ...parsed, narrowedToLoopback: false };
  return { host: '127.0.0.1', port: parsed.port, narrowedToLoopback: true };
}

/**
 * Resolves `config.address`, the HTTP server's: protected by `api.auth.enable`. Every interface is
 * `0.0.0.0` here, as the reference binds.
 */
export function resolveBindAddress(config: Config): BindAddress {
  const address = resolveListenAddress(config.address, config.api.auth.enable);
  if (address === undefined) throw new Error(`invalid address ${config.address}`);
  return address.host === '' ? { ...address, host: '0.0.0.0' } : address;
}
