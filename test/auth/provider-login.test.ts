import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EncryptJWT, exportSPKI, importJWK, SignJWT } from 'jose';
import { pino } from 'pino';
import { IdentityProviders } from '../../src/auth/identity-provider.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  authConfig,
  closedPort,
  envelopeOf,
  fetchTrusting,
  loopbackTls,
  manualClock,
  mintProviderToken,
  PASSWORD,
  payloadOf,
  providerKey,
  rawRequest,
  startKeySetServer,
  USERNAME,
  type Answer,
  type KeySetServer,
  type ProviderKey,
} from './support.js';

const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'https://streamcore.example.test/api';
const ALICE = 'auth0|alice';
const COOLDOWN_MS = 30_000;

function tenant(jwksUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    domain: 'id.example.test',
    audience: AUDIENCE,
    clientid: 'client-1',
    users: [ALICE, 'auth0|bob'],
    issuer: ISSUER,
    jwks_url: jwksUrl,
    ...extra,
  };
}

function providerConfig(tenants: Array<Record<string, unknown>>) {
  return authConfig({
    auth0: { enable: true, tenants: tenants as never },
    throttle: { max_failures: 10_000 },
  });
}

function providerLogin(url: string, token: string, body?: string): Promise<Answer> {
  return rawRequest(`${url}/api/login`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  });
}

function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { iss: ISSUER, aud: [AUDIENCE, 'https://id.example.test/userinfo'], sub: ALICE, ...extra };
}

function expectRejected(answer: Answer, reason: RegExp): void {
  assert.equal(answer.status, 401, answer.text);
  const envelope = envelopeOf(answer);
  assert.equal(envelope.message, 'Unauthorized');
  assert.match(envelope.details.join(' '), reason);
}

describe('identity-provider login', () => {
  let rsa: ProviderKey;
  let ec: ProviderKey;
  let keySet: KeySetServer;
  let server: TestServer;
  const clock = manualClock();

  before(async () => {
    rsa = await providerKey('rsa-1', 'RS256');
    ec = await providerKey('ec-1', 'ES256');
    keySet = await startKeySetServer([rsa, ec]);
    server = await startServer({ config: providerConfig([tenant(keySet.jwksUrl)]), now: clock.now });
  });
  after(async () => {
    await server.close();
    await keySet.close();
  });

  it('fetches no key set before the first provider login', () => {
    assert.equal(keySet.fetches, 0);
  });

  it('lists the tenant in GET /api after localjwt', async () => {
    const answer = await rawRequest(`${server.url}/api`);
    assert.deepEqual((JSON.parse(answer.text) as { auths: string[] }).auths, [
      'localjwt',
      `auth0 domain=id.example.test audience=${AUDIENCE} clientid=client-1`,
    ]);
  });

  it('logs in with an RS256 and an ES256 token, without a body or with empty credentials', async () => {
    for (const [key, body] of [
      [rsa, undefined],
      [ec, undefined],
      [rsa, JSON.stringify({ username: '', password: '' })],
      [ec, '{}'],
    ] as const) {
      const answer = await providerLogin(server.url, await mintProviderToken(key, claims()), body);
      assert.equal(answer.status, 200, answer.text);
      const pair = JSON.parse(answer.text) as { access_token: string; refresh_token: string };
      assert.equal(payloadOf(pair.access_token).sub, ALICE);
      assert.equal(payloadOf(pair.refresh_token).usefor, 'refresh');
      const guarded = await rawRequest(`${server.url}/api/v3/nothing-here`, {
        headers: { authorization: `Bearer ${pair.access_token}` },
      });
      assert.equal(guarded.status, 404);
    }
    assert.equal(keySet.fetches, 1, 'one fetch, then the cache');
  });

  it('prefers username and password when the body carries them', async () => {
    const answer = await providerLogin(
      server.url,
      'not-a-token',
      JSON.stringify({ username: USERNAME, password: PASSWORD }),
    );
    assert.equal(answer.status, 200);
    assert.equal(payloadOf((JSON.parse(answer.text) as { access_token: string }).access_token).sub, USERNAME);
  });

  it('rejects a wrong audience, a wrong issuer and a user not allowed', async () => {
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims({ aud: 'other' }))),
      /audience/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims({ aud: ['a', 'b'] }))),
      /audience/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims({ iss: 'https://evil.test/' }))),
      /issuer/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(ec, claims({ sub: 'auth0|mallory' }))),
      /user not allowed/,
    );
  });

  it('rejects an expired token and one whose nbf is in the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    expectRejected(
      await providerLogin(
        server.url,
        await mintProviderToken(rsa, claims({ iat: now - 7200, exp: now - 60 })),
      ),
      /expired/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims({ nbf: now + 600 }))),
      /not valid yet/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims({ exp: undefined }))),
      /missing claim "exp"/,
    );
  });

  it('rejects a tampered signature, a tampered payload, and a token signed by an unknown key with a known kid', async () => {
    const token = await mintProviderToken(rsa, claims());
    const [header, payload, signature = ''] = token.split('.');
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expectRejected(await providerLogin(server.url, `${header}.${payload}.${flipped}`), /bad signature/);
    const forged = Buffer.from(
      JSON.stringify({ ...claims(), sub: 'auth0|bob', exp: 9_999_999_999 }),
    ).toString('base64url');
    expectRejected(await providerLogin(server.url, `${header}.${forged}.${signature}`), /bad signature/);
    const impostor = await providerKey('rsa-1', 'RS256');
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(impostor, claims())),
      /bad signature/,
    );
  });

  it('rejects alg none, an HS256 token keyed with the provider public key, and other algorithms', async () => {
    const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = b64(claims({ iat: now, exp: now + 600 }));
    expectRejected(
      await providerLogin(server.url, `${b64({ alg: 'none', kid: 'rsa-1' })}.${body}.`),
      /algorithm/,
    );
    for (const secret of [JSON.stringify(rsa.jwk), await exportSPKI(rsa.publicKey), rsa.jwk.n ?? '']) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
      expectRejected(await providerLogin(server.url, token), /algorithm "HS256" not allowed/);
    }
    const rs512 = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'RS512', kid: 'rsa-1' })
      .setExpirationTime('1h')
      .sign(rsa.privateKey)
      .catch(() => `${b64({ alg: 'RS512', kid: 'rsa-1' })}.${body}.c2ln`);
    expectRejected(await providerLogin(server.url, rs512), /algorithm "RS512" not allowed/);
  });

  it('rejects an encrypted token (JWE) saying that a signed token is required', async () => {
    const token = await new EncryptJWT(claims())
      .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: 'rsa-1' })
      .setExpirationTime('1h')
      .encrypt(await importJWK({ ...rsa.jwk, alg: 'RSA-OAEP-256', use: 'enc' }, 'RSA-OAEP-256'));
    expectRejected(await providerLogin(server.url, token), /a signed token is required/);
  });

  it('rejects garbage tokens, a token without kid, and a token of an unknown kid', async () => {
    expectRejected(await providerLogin(server.url, 'garbage'), /malformed/);
    expectRejected(await providerLogin(server.url, 'a.b.c'), /malformed/);
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(rsa, claims(), { kid: undefined })),
      /kid/,
    );
    clock.advance(COOLDOWN_MS + 1000);
    const before = keySet.fetches;
    const stranger = await providerKey('rsa-unknown', 'RS256');
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(stranger, claims())),
      /unknown key/,
    );
    assert.equal(keySet.fetches, before + 1, 'an unknown kid causes a re-fetch after the cool-down');
  });

  it('bounds the fetches of a flood of unknown kids to one per cool-down', async () => {
    clock.advance(COOLDOWN_MS + 1000);
    const before = keySet.fetches;
    const strangers = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        providerKey(`flood-${index}`, index % 2 === 0 ? 'RS256' : 'ES256'),
      ),
    );
    const tokens = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        mintProviderToken(strangers[index % strangers.length] as ProviderKey, claims(), {
          kid: `flood-kid-${index}`,
        }),
      ),
    );
    // Half of them at once (they share one fetch), the rest one after another.
    const concurrent = await Promise.all(
      tokens.slice(0, 30).map((token) => providerLogin(server.url, token)),
    );
    for (const answer of concurrent) expectRejected(answer, /unknown key/);
    for (const token of tokens.slice(30))
      expectRejected(await providerLogin(server.url, token), /unknown key/);
    assert.equal(keySet.fetches, before + 1);
    clock.advance(COOLDOWN_MS + 1000);
    for (const token of tokens.slice(0, 10))
      expectRejected(await providerLogin(server.url, token), /unknown key/);
    assert.equal(keySet.fetches, before + 2, 'one more after the next cool-down');
  });

  it('follows a key rotation with one re-fetch', async () => {
    clock.advance(COOLDOWN_MS + 1000);
    const rotated = await providerKey('rsa-2', 'RS256');
    keySet.keys = [rotated, ec];
    const before = keySet.fetches;
    const answer = await providerLogin(server.url, await mintProviderToken(rotated, claims()));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(keySet.fetches, before + 1);
    const again = await providerLogin(
      server.url,
      await mintProviderToken(rotated, claims({ sub: 'auth0|bob' })),
    );
    assert.equal(again.status, 200);
    assert.equal(keySet.fetches, before + 1, 'the new key is cached');
  });
});

describe('identity-provider tenants sharing issuer and audience', () => {
  // Two applications of one provider account: same issuer and audience, their own key sets and users.
  const BOB = 'auth0|bob';
  let first: ProviderKey;
  let second: ProviderKey;
  let firstKeys: KeySetServer;
  let secondKeys: KeySetServer;
  let server: TestServer;
  const clock = manualClock();

  before(async () => {
    first = await providerKey('first-1', 'RS256');
    second = await providerKey('second-1', 'ES256');
    firstKeys = await startKeySetServer([first]);
    secondKeys = await startKeySetServer([second]);
    server = await startServer({
      config: providerConfig([
        tenant(firstKeys.jwksUrl, { clientid: 'first', users: [ALICE] }),
        tenant(secondKeys.jwksUrl, { clientid: 'second', users: [BOB] }),
      ]),
      now: clock.now,
    });
  });
  after(async () => {
    await server.close();
    await firstKeys.close();
    await secondKeys.close();
  });

  it('accepts a token of the second tenant: its key set has the kid and its users the sub', async () => {
    const answer = await providerLogin(server.url, await mintProviderToken(second, claims({ sub: BOB })));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(payloadOf((JSON.parse(answer.text) as { access_token: string }).access_token).sub, BOB);
    const own = await providerLogin(server.url, await mintProviderToken(first, claims()));
    assert.equal(own.status, 200, own.text);
    assert.deepEqual([firstKeys.fetches, secondKeys.fetches], [1, 1]);
  });

  it('refuses a user of the other tenant: the sub must be in the users of the tenant whose key verified', async () => {
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(first, claims({ sub: BOB }))),
      /user not allowed/,
    );
    expectRejected(
      await providerLogin(server.url, await mintProviderToken(second, claims({ sub: ALICE }))),
      /user not allowed/,
    );
  });

  it('answers an unknown kid after asking each key set at most once per cool-down', async () => {
    clock.advance(COOLDOWN_MS + 1000);
    const before = [firstKeys.fetches, secondKeys.fetches];
    const stranger = await providerKey('stranger', 'RS256');
    for (let attempt = 0; attempt < 10; attempt++) {
      expectRejected(
        await providerLogin(server.url, await mintProviderToken(stranger, claims())),
        /unknown key/,
      );
    }
    assert.deepEqual(
      [firstKeys.fetches, secondKeys.fetches],
      before.map((count) => count + 1),
    );
    // Within the cool-down, a token of either tenant still logs in from the cached sets.
    const answer = await providerLogin(server.url, await mintProviderToken(second, claims({ sub: BOB })));
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(
      [firstKeys.fetches, secondKeys.fetches],
      before.map((count) => count + 1),
    );
  });

  it("tries the next tenant when the first one's key set cannot be fetched", async () => {
    const port = await closedPort();
    const other = await startServer({
      config: providerConfig([
        tenant(`http://127.0.0.1:${port}/.well-known/jwks.json`, { users: [ALICE] }),
        tenant(secondKeys.jwksUrl, { users: [BOB] }),
      ]),
    });
    try {
      const answer = await providerLogin(other.url, await mintProviderToken(second, claims({ sub: BOB })));
      assert.equal(answer.status, 200, answer.text);
      // Nobody accepts a stranger, and the first tenant might have: the provider's fault, 503.
      const stranger = await providerKey('stranger', 'RS256');
      const down = await providerLogin(other.url, await mintProviderToken(stranger, claims()));
      assert.equal(down.status, 503, down.text);
      assert.match(envelopeOf(down).details[0] ?? '', /id\.example\.test: key set could not be fetched/);
    } finally {
      await other.close();
    }
  });
});

describe('identity-provider tenant defaults (the Auth0 layout)', () => {
  it('expects iss https://<domain>/ and fetches the key set from https://<domain>/.well-known/jwks.json', async () => {
    // A tenant with neither issuer nor jwks_url, whose domain is a key-set server on loopback
    // speaking HTTPS with a test certificate, verified by the server's own IdentityProviders.
    const tls = loopbackTls();
    const rsa = await providerKey('rsa-1', 'RS256');
    const keySet = await startKeySetServer([rsa], 0, tls);
    try {
      const domain = new URL(keySet.url).host;
      const providers = new IdentityProviders(
        [{ domain, audience: AUDIENCE, clientid: 'c', users: [ALICE] }],
        { fetch: fetchTrusting(tls.cert), now: Date.now, logger: pino({ level: 'silent' }) },
      );
      const token = (iss: string): Promise<string> => mintProviderToken(rsa, claims({ iss }));
      assert.equal(await providers.verify(await token(`https://${domain}/`)), ALICE);
      assert.equal(keySet.fetches, 1, 'the key set came from /.well-known/jwks.json of the domain');
      for (const other of [`https://${domain}`, `http://${domain}/`, ISSUER]) {
        await assert.rejects(providers.verify(await token(other)), /wrong issuer/, other);
      }
    } finally {
      await keySet.close();
    }
  });
});

describe('identity-provider outages', () => {
  it('starts without the provider, keeps password login, answers 503 with the reason, and recovers', async () => {
    const port = await closedPort();
    const rsa = await providerKey('rsa-1', 'RS256');
    const clock = manualClock();
    const server = await startServer({
      config: providerConfig([tenant(`http://127.0.0.1:${port}/.well-known/jwks.json`)]),
      now: clock.now,
    });
    let keySet: KeySetServer | undefined;
    try {
      const password = await rawRequest(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
      });
      assert.equal(password.status, 200);
      const token = await mintProviderToken(rsa, claims());
      const down = await providerLogin(server.url, token);
      assert.equal(down.status, 503, down.text);
      assert.ok(Number(down.headers['retry-after']) > 0);
      const envelope = envelopeOf(down);
      assert.equal(envelope.message, 'Service Unavailable');
      assert.match(
        envelope.details[0] ?? '',
        /identity provider unavailable: id\.example\.test: key set could not be fetched \(ECONNREFUSED/,
      );

      keySet = await startKeySetServer([rsa], port);
      const cooling = await providerLogin(server.url, token);
      assert.equal(cooling.status, 503, 'no new attempt within the cool-down');
      assert.equal(keySet.fetches, 0);
      clock.advance(COOLDOWN_MS + 1000);
      const up = await providerLogin(server.url, token);
      assert.equal(up.status, 200, up.text);
      assert.equal(keySet.fetches, 1);
    } finally {
      await server.close();
      await keySet?.close();
    }
  });

  it('gives up on a provider that does not answer within the time limit', async () => {
    const rsa = await providerKey('rsa-1', 'RS256');
    const keySet = await startKeySetServer([rsa]);
    keySet.hang = true;
    const server = await startServer({ config: providerConfig([tenant(keySet.jwksUrl)]) });
    try {
      const started = Date.now();
      const answer = await providerLogin(server.url, await mintProviderToken(rsa, claims()));
      assert.equal(answer.status, 503, answer.text);
      assert.match(envelopeOf(answer).details[0] ?? '', /timed out after 5000 ms/);
      assert.ok(Date.now() - started < 20_000);
      const ping = await rawRequest(`${server.url}/ping`);
      assert.equal(ping.status, 200);
    } finally {
      await server.close();
      await keySet.close();
    }
  });
});

describe('identity-provider tenants from the environment', () => {
  it('reads base64 JSON and auth0:// items of CORE_API_AUTH_AUTH0_TENANTS', async () => {
    const rsa = await providerKey('rsa-1', 'RS256');
    const keySet = await startKeySetServer([rsa]);
    const encoded = Buffer.from(JSON.stringify(tenant(keySet.jwksUrl))).toString('base64');
    const server = await startServer({
      config: authConfig({ throttle: { max_failures: 100 } }),
      env: {
        CORE_API_AUTH_AUTH0_ENABLE: 'true',
        CORE_API_AUTH_AUTH0_TENANTS: `${encoded},auth0://cid2@other.example.test?aud=aud2&user=u1&user=u2`,
      },
    });
    try {
      const identity = await rawRequest(`${server.url}/api`);
      assert.deepEqual((JSON.parse(identity.text) as { auths: string[] }).auths, [
        'localjwt',
        `auth0 domain=id.example.test audience=${AUDIENCE} clientid=client-1`,
        'auth0 domain=other.example.test audience=aud2 clientid=cid2',
      ]);
      const answer = await providerLogin(server.url, await mintProviderToken(rsa, claims()));
      assert.equal(answer.status, 200, answer.text);
    } finally {
      await server.close();
      await keySet.close();
    }
  });

  it('answers 400 for a provider token when provider login is off', async () => {
    const rsa = await providerKey('rsa-1', 'RS256');
    const server = await startServer({ config: authConfig() });
    try {
      const answer = await providerLogin(server.url, await mintProviderToken(rsa, claims()));
      assert.equal(answer.status, 400);
      assert.deepEqual(envelopeOf(answer).details, [
        'Missing authorization credentials',
        'body: empty',
        'identity-provider login is not enabled',
      ]);
    } finally {
      await server.close();
    }
  });
});
