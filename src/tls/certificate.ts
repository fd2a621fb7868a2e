import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';

/** A certificate chain with its key, checked to work together. */
export interface CertificatePair {
  /** PEM: the leaf first, then the intermediates. */
  readonly cert: Buffer;
  /** PEM private key of the leaf. */
  readonly key: Buffer;
  /** Validity of the leaf, milliseconds since the epoch. */
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
  /** DNS names and IP addresses of the leaf's subjectAltName, in its order. */
  readonly names: readonly string[];
}

/**
 * Checks that `cert` and `key` make a usable TLS identity (node refuses a key that does not match
 * the leaf) and reads the leaf's validity and names. Throws with node's reason otherwise.
 */
export function checkCertificatePair(cert: Buffer, key: Buffer): CertificatePair {
  createSecureContext({ cert, key });
  const leaf = new X509Certificate(cert);
  return {
    cert,
    key,
    notBeforeMs: Date.parse(leaf.validFrom),
    notAfterMs: Date.parse(leaf.validTo),
    names: subjectAltNames(leaf),
  };
}

/** The PEM blocks of a chain, leaf first. */
export function splitPemChain(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function subjectAltNames(leaf: X509Certificate): string[] {
  // Node's format: "DNS:a.example, DNS:b.example, IP Address:192.0.2.1".
  return (leaf.subjectAltName ?? '')
    .split(', ')
    .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
    .filter((name) => name !== '');
}
