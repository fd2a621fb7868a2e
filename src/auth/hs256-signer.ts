import { hash, type KeyObject } from 'node:crypto';

/** SHA-256's block: HMAC pads the key to it (RFC 2104). */
const BLOCK_BYTES = 64;
/** Signing inputs up to this long (bytes) are hashed from one preallocated buffer. */
const SCRATCH_BYTES = 2048;

/**
 * HMAC-SHA256 (RFC 2104) with one key, as two one-shot `crypto.hash` calls over the key's inner and
 * outer pads, which are computed once per key. Node's `createHmac` makes an Hmac object per call
 * (an OpenSSL context and a JavaScript wrapper the garbage collector must finalise): at the login
 * rate that was about 4 µs of a server's CPU per signature, where this costs under half of it
 * (docs/performance.md#login). The output is createHmac's, byte for byte
 * (test/auth/hs256-signer.test.ts).
 */
export class Hs256Signer {
  /** The inner pad followed by room for the message. */
  private readonly inner = Buffer.alloc(BLOCK_BYTES + SCRATCH_BYTES);
  /** The outer pad followed by the inner digest. */
  private readonly outer = Buffer.alloc(BLOCK_BYTES + 32);

  constructor(key: KeyObject) {
    let raw = key.export();
    if (raw.length > BLOCK_BYTES) raw = hash('sha256', raw, 'buffer');
    this.inner.fill(0x36, 0, BLOCK_BYTES);
    this.outer.fill(0x5c, 0, BLOCK_BYTES);
    for (let i = 0; i < raw.length; i++) {
      this.inner[i]! ^= raw[i]!;
      this.outer[i]! ^= raw[i]!;
    }
  }

  /** The base64url HMAC of `input`, an ASCII string (a JWS signing input is base64url and a dot). */
  sign(input: string): string {
    let innerDigest: Buffer;
    if (input.length <= SCRATCH_BYTES) {
      const written = this.inner.write(input, BLOCK_BYTES, 'latin1');
      innerDigest = hash('sha256', this.inner.subarray(0, BLOCK_BYTES + written), 'buffer');
    } else {
      const message = Buffer.concat([this.inner.subarray(0, BLOCK_BYTES), Buffer.from(input, 'latin1')]);
      innerDigest = hash('sha256', message, 'buffer');
    }
    innerDigest.copy(this.outer, BLOCK_BYTES);
    return hash('sha256', this.outer, 'base64url');
  }
}
