import type { Config } from './schema.js';
import { parseListenAddress } from './validate.js';

/** Where the HTTP server binds, and why. */
export interface BindAddress {
  host: string;
  port: number;
  /**
   * True when the address named no host and authentication is off, so the server binds to
   * loopback instead of every interface (SPEC §2.2 "Safe first start").
   */
  narrowedToLoopback: boolean;
}

/**
 * Resolves `config.address` to a bind host and port. `:port` means every interface only while the
 * API is protected; with `api.auth.enable` off it means loopback, so an unprotected server is not
 * reachable from the network unless its address names a host on purpose (e.g. `0.0.0.0:8080`).
 */
export function resolveBindAddress(config: Config): BindAddress {
  const address = parseListenAddress(config.address);
  if (address === undefined) throw new Error(`invalid address ${config.address}`);
  if (address.host !== '') return { ...address, narrowedToLoopback: false };
  return config.api.auth.enable
    ? { host: '0.0.0.0', port: address.port, narrowedToLoopback: false }
    : { host: '127.0.0.1', port: address.port, narrowedToLoopback: true };
}
