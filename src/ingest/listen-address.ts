import type { Logger } from 'pino';
import { resolveListenAddress, type BindAddress } from '../config/index.js';

/** An ingest listener's address as configured, and the token that protects it. */
export interface IngestAddress {
  /** Config key of the address, e.g. `rtmp.address`. */
  key: string;
  address: string;
  /** Config key of the token, e.g. `rtmp.token`. */
  tokenKey: string;
  token: string;
}

/**
 * Where an ingest listener binds: as the HTTP server does with authentication off, `:port` means
 * loopback while the token is empty, so nobody on the network can publish into an unprotected
 * server unless the address names a host on purpose (docs/security.md). Every start without a
 * token logs a warning naming the token's key. Throws, naming the key, for an address that does
 * not parse.
 */
export function resolveIngestAddress(listener: IngestAddress, logger: Logger): BindAddress {
  const { key, address, tokenKey, token } = listener;
  const resolved = resolveListenAddress(address, token !== '');
  if (resolved === undefined) throw new Error(`${key}: invalid address "${address}"`);
  if (token === '') {
    logger.warn(
      { key, address, loopbackOnly: resolved.narrowedToLoopback },
      resolved.narrowedToLoopback
        ? `${tokenKey} is empty: anyone who can reach ${key} can publish and play; listening on loopback only because the address names no host`
        : `${tokenKey} is empty: anyone who can reach ${key} (${address}) can publish and play; set ${tokenKey}, or listen on loopback`,
    );
  }
  return resolved;
}
