import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { deriveSigningKeyBytes } from '../../src/auth/signing-key.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authConfig, envelopeOf, loginPair, PASSWORD, rawRequest, SECRET, USERNAME } from './support.js';

const KEY = deriveSigningKeyBytes(SECRET, USERNAME, PASSWORD);
const WRONG_KEY = deriveSigningKeyBytes(SECRET, USERNAME, `${PASSWORD}!`);

/** A token as the server would issue it, with `claims` and `header` overriding, signed with `key`. */
function sign(
  claims: Record<string, unknown>,
  options: { alg?: string; key?: Uint8Array; omit?: string[] } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload: Record<string, unknown> = {
    iss: 'streamcore',
    sub: USERNAME,
    iat: now,
    exp: now + 600,
    exi: 600,
    jti: '0b4a5b6c-7d8e-4f00-8a1b-2c3d4e5f6a7b',
    usefor: 'access',
    ...claims,
  };
  for (const name of options.omit ?? []) delete payload[name];
  return new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .sign(options.key ?? KEY);
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const JSON_VALUES_BUT_STRING: unknown[] = [
  null,
  true,
  false,
  0,
  1,
  -1,
  1.5,
  1e308,
  [],
  ['access'],
  {},
  { a: 1 },
];

describe('the /api/v3 guard', () => {
  let server: TestServer;
  let access: string;
  let refresh: string;
  const path = '/api/v3/nothing-here';

  before(async () => {
    server = await startServer({ config: authConfig() });
    ({ access_token: access, refresh_token: refresh } = await loginPair(server.url));
  });
  after(() => server.close());

  async function expectRejected(authorization: string | undefined, label: string): Promise<void> {
    const answer = await rawRequest(`${server.url}${path}`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    assert.equal(answer.status, 401, `${label}: ${answer.status} ${answer.text}`);
    assert.deepEqual(
      JSON.parse(answer.text),
      { code: 401, message: 'Unauthorized', details: ['Missing or invalid JWT token'] },
      label,
    );
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
  }

  it('lets a valid access token through (404 for an unknown path) with any case of the scheme', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const answer = await rawRequest(`${server.url}${path}`, {
        headers: { authorization: `${scheme} ${access}` },
      });
      assert.equal(answer.status, 404, scheme);
      assert.equal(envelopeOf(answer).message, 'Not Found');
    }
  });

  it('accepts a token it did not issue itself but that is signed right (sanity of the test key)', async () => {
    const answer = await rawRequest(`${server.url}${path}`, {
      headers: { authorization: `Bearer ${await sign({})}` },
    });
    assert.equal(answer.status, 404);
  });

  it('answers 401 without a token, for a refresh token, and for garbage', async () => {
    await expectRejected(undefined, 'no header');
    await expectRejected(`Bearer ${refresh}`, 'refresh token');
    await expectRejected('Bearer garbage', 'garbage');
    await expectRejected(`Bearer ${access.slice(0, -2)}`, 'truncated signature');
  });

  it('rejects any algorithm but HS256, including none', async () => {
    await expectRejected(`Bearer ${await sign({}, { alg: 'HS384' })}`, 'HS384');
    await expectRejected(`Bearer ${await sign({}, { alg: 'HS512' })}`, 'HS512');
    const [, payload] = access.split('.');
    await expectRejected(`Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`, 'alg none');
    await expectRejected(`Bearer ${b64({ alg: 'none' })}.${payload}`, 'alg none, two parts');
    await expectRejected(`Bearer ${b64({ typ: 'JWT' })}.${payload}.${access.split('.')[2]}`, 'no alg');
  });

  it('rejects a token whose signature is spelled in non-canonical base64url', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = access.at(-1) ?? '';
    for (const flip of [1, 2, 3]) {
      const sibling = alphabet[alphabet.indexOf(last) ^ flip] ?? '';
      await expectRejected(`Bearer ${access.slice(0, -1)}${sibling}`, `last character ${sibling}`);
    }
  });

  it('rejects a token signed with another key', async () => {
    await expectRejected(`Bearer ${await sign({}, { key: WRONG_KEY })}`, 'wrong key');
  });

  it('rejects tokens without exp, with an expired exp, a future nbf, or another issuer', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectRejected(`Bearer ${await sign({}, { omit: ['exp'] })}`, 'no exp');
    await expectRejected(`Bearer ${await sign({ exp: now - 1 })}`, 'expired');
    await expectRejected(`Bearer ${await sign({ nbf: now + 120 })}`, 'future nbf');
    await expectRejected(`Bearer ${await sign({ iss: 'datarhei-core' })}`, 'other iss');
    await expectRejected(`Bearer ${await sign({}, { omit: ['iss'] })}`, 'no iss');
    await expectRejected(`Bearer ${await sign({}, { omit: ['usefor'] })}`, 'no usefor');
    await expectRejected(`Bearer ${await sign({}, { omit: ['sub'] })}`, 'no sub');
  });

  it('rejects usefor, sub, exp and nbf of every unexpected JSON type', async () => {
    for (const value of [...JSON_VALUES_BUT_STRING, 'refresh', 'ACCESS', 'access ', '']) {
      await expectRejected(`Bearer ${await sign({ usefor: value })}`, `usefor ${JSON.stringify(value)}`);
    }
    for (const value of [...JSON_VALUES_BUT_STRING, '']) {
      await expectRejected(`Bearer ${await sign({ sub: value })}`, `sub ${JSON.stringify(value)}`);
    }
    for (const value of [null, true, '9999999999', [], {}]) {
      await expectRejected(`Bearer ${await sign({ exp: value })}`, `exp ${JSON.stringify(value)}`);
      await expectRejected(`Bearer ${await sign({ nbf: value })}`, `nbf ${JSON.stringify(value)}`);
      await expectRejected(`Bearer ${await sign({ iss: value })}`, `iss ${JSON.stringify(value)}`);
    }
  });

  it('rejects malformed and oversized headers', async () => {
    const cases = [
      '',
      'Bearer',
      'Bearer ',
      'Bearer  ',
      `Bearer  ${access} extra`,
      `Basic ${access}`,
      `Token ${access}`,
      `Bearer${access}`,
      `Bearer ${access}.x`,
      `Bearer ${access.split('.').slice(0, 2).join('.')}`,
      'Bearer a.b.c',
      'Bearer ...',
      'Bearer a.b.c.d.e',
      `Bearer ${'A'.repeat(9000)}`,
      `Bearer ${access}${'A'.repeat(12_000)}`,
      `Bearer ${b64('just a string')}.${b64('x')}.sig`,
      `Bearer ${b64([1, 2])}.${b64({})}.sig`,
      'Bearer %00%ff',
      `Bearer ${Buffer.from([0xc3, 0x28]).toString('base64url')}.e30.e30`,
    ];
    for (const authorization of cases) await expectRejected(authorization, authorization.slice(0, 40));
  });

  it('answers 401 for every path, method and spelling under /api/v3 without a token', async () => {
    for (const [method, target] of [
      ['GET', '/api/v3'],
      ['GET', '/api/v3/'],
      ['POST', '/api/v3/metrics'],
      ['DELETE', '/api/v3/metrics'],
      ['GET', '/api/v3/process/abc/config'],
      ['PATCH', '/api/v3/fs/disk/a.txt'],
      ['GET', '/api/%763/fs'],
      ['GET', '/api/v%33/metrics'],
      ['GET', '/api/v3?x=1'],
    ] as const) {
      const answer = await rawRequest(`${server.url}${target}`, { method });
      assert.equal(answer.status, 401, `${method} ${target}: ${answer.text}`);
      assert.deepEqual(envelopeOf(answer).details, ['Missing or invalid JWT token']);
    }
    const head = await rawRequest(`${server.url}/api/v3/fs`, { method: 'HEAD' });
    assert.equal(head.status, 401);
  });

  it('serves no /api/v3 answer without a token for spellings the router might map there', async () => {
    // The guard decides by the request target alone; these are the spellings a router option
    // (duplicate slashes, case, dot segments, parameters) could map onto an /api/v3 route.
    for (const target of [
      '//api/v3/metrics',
      '/api//v3/metrics',
      '/api/v3//metrics',
      '/API/v3/metrics',
      '/api/V3/metrics',
      '/api/./v3/metrics',
      '/api/x/../v3/metrics',
      '/api/v3/./metrics',
      '/api/v3/metrics;x=1',
      '/api/v3/metrics%2F',
    ]) {
      const answer = await rawRequest(`${server.url}${target}`);
      assert.ok(answer.status === 401 || answer.status === 404, `${target}: ${answer.status} ${answer.text}`);
      assert.doesNotMatch(answer.text, /"description"/, `${target} leaked the catalog`);
    }
  });

  it('refuses an undecodable target under /api/v3 rather than serving it', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/%zz`);
    assert.ok(answer.status === 400 || answer.status === 401, `${answer.status} ${answer.text}`);
  });

  it('leaves paths that only look like the prefix alone', async () => {
    for (const target of ['/api/v30', '/api/v3x/metrics', '/api/v2/metrics']) {
      const answer = await rawRequest(`${server.url}${target}`);
      assert.equal(answer.status, 404, target);
    }
  });

  it('answers 405 with Allow for a wrong method on a route when the token is valid', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/fs`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${access}` },
    });
    assert.equal(answer.status, 405);
    assert.match(String(answer.headers.allow), /GET/);
  });

  it('answers a CORS preflight under /api/v3 without a token', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/metrics`, {
      method: 'OPTIONS',
      headers: { origin: 'http://ui.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(answer.status, 204);
  });

  it('does not serve /api/v3 in absolute form without a token', async () => {
    const { port } = new URL(server.url);
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
      socket.write(`GET http://127.0.0.1:${port}/api/v3/fs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    });
    assert.doesNotMatch(text.split('\r\n')[0] ?? '', / 200 /);
  });

  it('keeps answering after all of the above', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/fs`, {
      headers: { authorization: `Bearer ${access}` },
    });
    assert.equal(answer.status, 200);
  });
});
