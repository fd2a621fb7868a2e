import { createHash, sign, type KeyObject } from 'node:crypto';

/** A flattened JWS (RFC 7515 §7.2.2), the body of every ACME POST (RFC 8555 §6.2). */
export interface FlattenedJws {
  protected: string;
  payload: string;
  signature: string;
}

/** The public JWK of a P-256 account key, members in the order RFC 7638 hashes them. */
export interface EcPublicJwk {
  crv: string;
  kty: string;
  x: string;
  y: string;
}

export function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

export function publicJwk(accountKey: KeyObject): EcPublicJwk {
  const { crv, kty, x, y } = accountKey.export({ format: 'jwk' });
  if (crv === undefined || kty === undefined || x === undefined || y === undefined) {
    throw new Error('the ACME account key is not an EC key');
  }
  return { crv, kty, x, y };
}

/** The JWK thumbprint (RFC 7638), which an HTTP-01 key authorization ends with (RFC 8555 §8.1). */
export function jwkThumbprint(jwk: EcPublicJwk): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return base64url(createHash('sha256').update(canonical).digest());
}

/**
 * Signs `payload` with the account key, ES256. `payload` undefined makes a POST-as-GET (an empty
 * payload, RFC 8555 §6.3). `signer` is the account URL (`kid`) once the account exists; before,
 * the public key itself (`jwk`).
 */
export function signJws(
  accountKey: KeyObject,
  header: { url: string; nonce: string; signer: { kid: string } | { jwk: EcPublicJwk } },
  payload: unknown,
): FlattenedJws {
  const protectedHeader = base64url(
    JSON.stringify({ alg: 'ES256', ...header.signer, nonce: header.nonce, url: header.url }),
  );
  const encodedPayload = payload === undefined ? '' : base64url(JSON.stringify(payload));
  // JWS wants the raw r‖s form, not DER (RFC 7518 §3.4).
  const signature = sign('sha256', Buffer.from(`${protectedHeader}.${encodedPayload}`), {
    key: accountKey,
    dsaEncoding: 'ieee-p1363',
  });
  return { protected: protectedHeader, payload: encodedPayload, signature: base64url(signature) };
}
