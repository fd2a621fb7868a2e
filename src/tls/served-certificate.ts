import type { SecureContextOptions } from 'node:tls';
import type { CertificatePair } from './certificate.js';

/** Takes a new certificate without dropping connections (`tls.Server.setSecureContext`). */
export type CertificateTaker = (options: SecureContextOptions) => void;

/**
 * The certificate the TLS listeners (HTTPS, RTMPS) serve now. A new one is handed to every
 * listener at once; connections already open keep the one they shook hands with.
 */
export class ServedCertificate {
  private pair: CertificatePair | undefined;
  private readonly takers = new Set<CertificateTaker>();

  /** Undefined until the first certificate (an automatic one may take a while). */
  get current(): CertificatePair | undefined {
    return this.pair;
  }

  /** Serves `pair` from now on, on every listener. */
  replace(pair: CertificatePair): void {
    this.pair = pair;
    for (const take of this.takers) take({ cert: pair.cert, key: pair.key });
  }

  /** Registers a listener; answers the function that unregisters it. */
  subscribe(take: CertificateTaker): () => void {
    this.takers.add(take);
    return () => this.takers.delete(take);
  }
}
