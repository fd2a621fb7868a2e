import assert from 'node:assert/strict';
import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { Hs256Signer } from '../../src/auth/hs256-signer.js';
import { OwnTokens } from '../../src/auth/own-tokens.js';
import { deriveSigningKey } from '../../src/auth/signing-key.js';

/** Base64url characters and the dot: what a JWS signing input is made of. */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';

function randomInput(length: number): string {
  const bytes = randomBytes(length);
  let text = '';
  for (const byte of bytes) text += ALPHABET[byte % ALPHABET.length];
  return text;
}

describe('Hs256Signer', () => {
  it("signs as node's createHmac does, for keys shorter and longer than a block and inputs of any length", () => {
    for (const keyBytes of [1, 32, 63, 64, 65, 200]) {
      const key = createSecretKey(randomBytes(keyBytes));
      const signer = new Hs256Signer(key);
      // Around the preallocated buffer's end (2048) too, where the signer changes its path.
      for (const length of [0, 1, 55, 56, 64, 300, 2047, 2048, 2049, 10_000]) {
        const input = randomInput(length);
        assert.equal(
          signer.sign(input),
          createHmac('sha256', key).update(input).digest('base64url'),
          `key ${keyBytes} bytes, input ${length} characters`,
        );
      }
    }
  });

  it('leaves no trace of a longer input in the next signature', () => {
    const key = createSecretKey(randomBytes(32));
    const signer = new Hs256Signer(key);
    signer.sign(randomInput(1500));
    const short = randomInput(40);
    assert.equal(signer.sign(short), createHmac('sha256', key).update(short).digest('base64url'));
  });
});

describe('OwnTokens with the signer', () => {
  it('issues tokens that jose verifies, and none after a new key', async () => {
    const key = deriveSigningKey('secret', 'admin', 'password');
    const tokens = new OwnTokens({ key, accessTtlSec: 600, refreshTtlSec: 86_400, now: Date.now });
    const pair = tokens.issuePair('admin');
    const { payload } = await jwtVerify(pair.access_token, key, { algorithms: ['HS256'] });
    assert.equal(payload.sub, 'admin');
    assert.equal(payload.usefor, 'access');
    assert.deepEqual(await tokens.verify(pair.refresh_token, 'refresh'), {
      subject: 'admin',
      expiresAtSec: (payload.iat as number) + 86_400,
    });
    tokens.rekey(deriveSigningKey('another secret', 'admin', 'password'));
    assert.equal(await tokens.verify(pair.access_token, 'access'), undefined);
    const next = tokens.issue('admin', 'access');
    assert.equal((await tokens.verify(next, 'access'))?.subject, 'admin');
  });
});
