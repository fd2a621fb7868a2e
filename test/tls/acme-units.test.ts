import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { problemOf, retryAfterMs } from '../../src/tls/acme/acme-problem.js';
import { certificateRequest } from '../../src/tls/acme/csr.js';

describe('ACME pieces on literals', () => {
  it('writes a certificate request openssl verifies, with every name as a DNS subjectAltName', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = certificateRequest(['a.example.test', 'b.example.test'], privateKey);
    const text = execFileSync('openssl', ['req', '-inform', 'DER', '-verify', '-noout', '-text'], {
      input: der,
      stdio: ['pipe', 'pipe', 'pipe'],
    }).toString();
    assert.match(text, /Subject: CN ?= ?a\.example\.test/);
    assert.match(text, /DNS:a\.example\.test, DNS:b\.example\.test/);
  });

  it('reads a problem document, the refused name and the Retry-After', () => {
    const body = Buffer.from(
      JSON.stringify({
        type: 'urn:ietf:params:acme:error:rejectedIdentifier',
        detail: 'Error creating new order :: Cannot issue for "bad.example": the domain is blocked',
        subproblems: [
          {
            type: 'urn:ietf:params:acme:error:rejectedIdentifier',
            identifier: { type: 'dns', value: 'bad.example' },
          },
        ],
      }),
    );
    const problem = problemOf(400, { 'retry-after': '120' }, body, 0, 'POST x');
    assert.equal(problem.kind, 'rejectedIdentifier');
    assert.equal(problem.hostName, 'bad.example');
    assert.equal(problem.retryAfterMs, 120_000);
    const plain = problemOf(503, {}, Buffer.from('<html>busy</html>'), 0, 'GET https://ca/dir');
    assert.equal(plain.detail, 'GET https://ca/dir: HTTP 503');
    assert.equal(
      retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')),
      60_000,
    );
    assert.equal(retryAfterMs('soon', 0), undefined);
  });
});
