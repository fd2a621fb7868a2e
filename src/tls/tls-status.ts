import type { CertificatePair } from './certificate.js';
import type { TlsStatusView } from './contract.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** Holds the TLS status answered by the API (contract.ts); the certificate sources write it. */
export class TlsStatusBoard {
  private view: TlsStatusView;

  constructor(
    enabled: boolean,
    private readonly now: () => number,
  ) {
    this.view = {
      state: enabled ? 'pending' : 'off',
      source: 'none',
      names: [],
      not_after: null,
      renew_at: null,
      error: null,
      next_attempt_at: null,
    };
  }

  current(): TlsStatusView {
    return structuredClone(this.view);
  }

  /** A certificate is served now; a failure before it is over. */
  serving(pair: CertificatePair, source: 'file' | 'acme', renewAtMs?: number): void {
    this.view = {
      state: 'serving',
      source,
      names: [...pair.names],
      not_after: iso(pair.notAfterMs),
      renew_at: renewAtMs === undefined ? null : iso(renewAtMs),
      error: null,
      next_attempt_at: null,
    };
  }

  /** Something failed; the certificate served before (if one) stays served. */
  failed(failure: { name?: string; reason: string; retryAtMs?: number }): void {
    this.view.error = { name: failure.name ?? null, reason: failure.reason, at: iso(this.now()) };
    this.view.next_attempt_at = failure.retryAtMs === undefined ? null : iso(failure.retryAtMs);
  }
}
