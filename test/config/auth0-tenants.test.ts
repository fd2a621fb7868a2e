import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseTenantsEnv, validateTenant } from '../../src/config/auth0-tenants.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';

const base64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

describe('CORE_API_AUTH_AUTH0_TENANTS', () => {
  it('reads auth0:// items with client id, audience and users', () => {
    assert.deepEqual(
      parseTenantsEnv('auth0://cid@tenant.eu.auth0.com?aud=https%3A%2F%2Fapi&user=auth0%7C1&user=u2'),
      {
        tenants: [
          {
            domain: 'tenant.eu.auth0.com',
            audience: 'https://api',
            clientid: 'cid',
            users: ['auth0|1', 'u2'],
          },
        ],
      },
    );
    assert.deepEqual(parseTenantsEnv('auth0://tenant.auth0.com?aud=a'), {
      tenants: [{ domain: 'tenant.auth0.com', audience: 'a', clientid: '', users: [] }],
    });
  });

  it('reads base64 JSON items with issuer and jwks_url, in order, mixed with URL items', () => {
    const generic = {
      domain: 'idp.example.org',
      audience: 'streamcore',
      clientid: 'c',
      users: ['alice'],
      issuer: 'https://idp.example.org/realms/media',
      jwks_url: 'https://idp.example.org/realms/media/protocol/openid-connect/certs',
      ignored: true,
    };
    const parsed = parseTenantsEnv(` ${base64(generic)} , auth0://x@second.auth0.com?aud=b ,`);
    assert.ok('tenants' in parsed);
    assert.deepEqual(parsed.tenants, [
      {
        domain: 'idp.example.org',
        audience: 'streamcore',
        clientid: 'c',
        users: ['alice'],
        issuer: 'https://idp.example.org/realms/media',
        jwks_url: 'https://idp.example.org/realms/media/protocol/openid-connect/certs',
      },
      { domain: 'second.auth0.com', audience: 'b', clientid: 'x', users: [] },
    ]);
    assert.deepEqual(parseTenantsEnv(''), { tenants: [] });
  });

  it('names the item and the problem', () => {
    assert.deepEqual(parseTenantsEnv('auth0://a.test?aud=x,auth0://b.test'), {
      problem: 'item 2: audience must not be empty',
    });
    assert.deepEqual(parseTenantsEnv('!!!'), {
      problem: 'item 1: neither an auth0:// URL nor base64 of a JSON object',
    });
    assert.deepEqual(parseTenantsEnv(base64([1])), { problem: 'item 1: a tenant must be a JSON object' });
    assert.deepEqual(parseTenantsEnv(base64({ domain: 'a.test', audience: 'x', users: 'alice' })), {
      problem: 'item 1: users must be an array of strings',
    });
  });

  it('reports a client id that is not valid percent-encoding as a problem of its item', async () => {
    // `%A` is cut short and `%E0%A4` begins a three-byte UTF-8 sequence: decodeURIComponent throws.
    assert.deepEqual(parseTenantsEnv('auth0://a.test?aud=x,auth0://%E0%A4%A@x.test?aud=a'), {
      problem: 'item 2: client id "%E0%A4%A" is not valid percent-encoding',
    });
    // Through the loader, it is one config problem line naming the env var (not a crash at start-up).
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-tenants-'));
    try {
      const failure = await loadConfig(
        {
          CORE_CONFIGFILE: join(dir, 'config.json'),
          CORE_API_AUTH_AUTH0_TENANTS: 'auth0://%E0%A4%A@x.test?aud=a',
        },
        dir,
      ).then(
        () => assert.fail('expected a ConfigError'),
        (error: unknown) => error,
      );
      assert.ok(failure instanceof ConfigError, String(failure));
      const lines = failure.problems.filter((line) => line.includes('CORE_API_AUTH_AUTH0_TENANTS'));
      assert.deepEqual(lines, [
        'api.auth.auth0.tenants (env CORE_API_AUTH_AUTH0_TENANTS): item 1: client id "%E0%A4%A" is not valid percent-encoding',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('validateTenant', () => {
  it('checks the types, the domain and the key set URL', () => {
    assert.equal(validateTenant({ domain: 'a.test', audience: 5 }), 'audience must be a string');
    assert.equal(validateTenant({ domain: 'a.test', audience: 'x', issuer: 1 }), 'issuer must be a string');
    assert.equal(
      validateTenant({ domain: 'a.test/path', audience: 'x' }),
      'domain "a.test/path" is not a host name (with an optional port)',
    );
    assert.equal(
      validateTenant({ domain: 'a b', audience: 'x' }),
      'domain "a b" is not a host name (with an optional port)',
    );
    assert.equal(
      validateTenant({ domain: 'a.test', audience: 'x', jwks_url: 'file:///etc/keys' }),
      'jwks_url "file:///etc/keys" is not an http(s) URL',
    );
    assert.deepEqual(
      validateTenant({ domain: '127.0.0.1:8443', audience: 'x', jwks_url: 'http://127.0.0.1:1/k' }),
      {
        domain: '127.0.0.1:8443',
        audience: 'x',
        clientid: '',
        users: [],
        jwks_url: 'http://127.0.0.1:1/k',
      },
    );
  });
});
