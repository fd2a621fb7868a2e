import { X509Certificate } from 'node:crypto';
import { splitPemChain } from './certificate.js';

/**
 * Whether a served chain leads to one of `roots` (node's bundled Mozilla roots by default): only
 * then does the server send HSTS, which makes browsers refuse the site for a year if HTTPS ever
 * breaks. A self-signed or private-CA certificate gets no HSTS, so a test set-up cannot lock
 * browsers out of the plain listener.
 */
export function chainIsPubliclyTrusted(chainPem: string, roots: readonly string[], nowMs: number): boolean {
  const chain = splitPemChain(chainPem).map((pem) => new X509Certificate(pem));
  if (chain.length === 0) return false;
  for (const [index, certificate] of chain.entries()) {
    if (Date.parse(certificate.validTo) < nowMs) return false;
    const issuer = chain[index + 1];
    if (issuer !== undefined && !signedBy(certificate, issuer)) return false;
  }
  const top = chain[chain.length - 1] as X509Certificate;
  return roots.some((pem) => {
    const root = new X509Certificate(pem);
    return root.fingerprint256 === top.fingerprint256 || signedBy(top, root);
  });
}

function signedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
}
