import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessCache } from '../../src/auth/access-cache.js';
import { hasCanonicalSignature } from '../../src/auth/compact-jws.js';
import { bearerToken } from '../../src/auth/bearer.js';
import { throttleKeyOfAddress, withoutMappedPrefix } from '../../src/http/client-address.js';
import { isUnderPrefix } from '../../src/http/request-path.js';
import { parseKeySet } from '../../src/auth/key-set-document.js';
import { MalformedJsonBody, readLoginForm } from '../../src/auth/login-body.js';
import { LoginThrottle } from '../../src/auth/login-throttle.js';
import { PasswordCheck } from '../../src/auth/credentials.js';

describe('bearerToken', () => {
  it('takes the token of a Bearer header, scheme in any case', () => {
    assert.equal(bearerToken('Bearer abc.def.ghi'), 'abc.def.ghi');
    assert.equal(bearerToken('bearer abc'), 'abc');
    assert.equal(bearerToken('BEARER abc '), 'abc');
  });
  it('refuses other shapes', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Bearer  ',
      'Basic abc',
      'Bearerabc',
      'Bearer a b',
      'Bearer\tabc',
    ]) {
      assert.equal(bearerToken(header), undefined, String(header));
    }
  });
});

describe('isUnderPrefix', () => {
  const cases: Array<[string, boolean]> = [
    ['/api/v3', true],
    ['/api/v3/', true],
    ['/api/v3/metrics', true],
    ['/api/v3?x', true],
    ['/api/%763/metrics', true],
    ['/api%2Fv3/metrics', true],
    ['/%61pi/v3', true],
    ['http://host:1/api/v3/metrics', true],
    ['HTTPS://host/api/v3', true],
    ['http://host/api/%763', true],
    ['/api/v3/%zz', true],
    ['/api/v30', false],
    ['/api/v3x', false],
    ['/api/v2/metrics', false],
    ['/api', false],
    ['/', false],
    ['/memfs/api/v3/x', false],
    ['http://host/other?/api/v3', false],
    ['/x?/api/v3', false],
  ];
  for (const [url, expected] of cases) {
    it(`${url} → ${expected}`, () => assert.equal(isUnderPrefix(url, '/api/v3'), expected));
  }
});

describe('AccessCache', () => {
  it('answers until the expiry, then forgets', () => {
    const cache = new AccessCache(10);
    cache.add('Bearer a', 2000);
    assert.equal(cache.has('Bearer a', 1999), true);
    assert.equal(cache.has('Bearer a', 2000), false);
    assert.equal(cache.size, 0);
    assert.equal(cache.has('Bearer b', 0), false);
  });
  it('holds at most its bound, evicting the oldest', () => {
    const cache = new AccessCache(3);
    for (const name of ['a', 'b', 'c', 'd']) cache.add(name, 10_000);
    assert.equal(cache.size, 3);
    assert.equal(cache.has('a', 0), false);
    assert.equal(cache.has('d', 0), true);
  });
  it('answers a repeated header from its last hit only until the expiry, and forgets it on clear', () => {
    const cache = new AccessCache(10);
    cache.add('Bearer a', 2000);
    cache.add('Bearer b', 3000);
    // Fresh strings, as the HTTP parser hands them over.
    const a = ['Bearer', 'a'].join(' ');
    assert.equal(cache.has(a, 1000), true);
    assert.equal(cache.has(['Bearer', 'a'].join(' '), 1999), true);
    assert.equal(cache.has(a, 2000), false);
    assert.equal(cache.has('Bearer b', 2500), true);
    assert.equal(cache.has('Bearer a', 1000), false, 'expired and deleted, whatever the last hit');
    cache.clear();
    assert.equal(cache.has('Bearer b', 2500), false);
  });
  it('does not cache very long headers', () => {
    const cache = new AccessCache(3);
    cache.add('x'.repeat(2000), 10_000);
    assert.equal(cache.size, 0);
  });
});

describe('client address keys', () => {
  it('counts IPv4 one by one, also when mapped', () => {
    assert.equal(throttleKeyOfAddress('127.0.0.2'), '127.0.0.2');
    assert.equal(throttleKeyOfAddress('::ffff:10.0.0.1'), '10.0.0.1');
    assert.equal(withoutMappedPrefix('::FFFF:10.0.0.1'), '10.0.0.1');
    assert.equal(withoutMappedPrefix('::1'), '::1');
  });
  it('counts IPv6 per /64', () => {
    assert.equal(throttleKeyOfAddress('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(throttleKeyOfAddress('2001:db8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(throttleKeyOfAddress('2001:0DB8:0001:0002:ffff::1'), '2001:db8:1:2::/64');
    assert.equal(throttleKeyOfAddress('::1'), '0:0:0:0::/64');
    assert.equal(throttleKeyOfAddress('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(throttleKeyOfAddress('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  });
  it('leaves what is not an address as it is', () => {
    assert.equal(throttleKeyOfAddress('unknown'), 'unknown');
  });
});

describe('LoginThrottle', () => {
  function throttle(): { throttle: LoginThrottle; advance: (ms: number) => void } {
    let now = 1_000_000;
    return {
      throttle: new LoginThrottle({ maxFailures: 3, windowSec: 60, now: () => now }),
      advance: (ms) => (now += ms),
    };
  }

  it('refuses after maxFailures within the window until the oldest leaves it', () => {
    const { throttle: t, advance } = throttle();
    t.recordFailure('10.0.0.1', 'admin');
    advance(10_000);
    t.recordFailure('10.0.0.1', 'admin');
    advance(10_000);
    assert.equal(t.retryAfterSec('10.0.0.1', 'admin'), 0);
    t.recordFailure('10.0.0.1', 'admin');
    assert.equal(t.retryAfterSec('10.0.0.1', 'admin'), 40);
    assert.equal(t.retryAfterSec('10.0.0.1'), 40, 'the address alone is blocked');
    assert.equal(t.retryAfterSec('10.0.0.2', 'admin'), 0, 'an address without failures is not refused');
    t.recordFailure('10.0.0.2', 'other');
    assert.equal(
      t.retryAfterSec('10.0.0.2', 'admin'),
      40,
      'an address with failures is, for the locked name',
    );
    assert.equal(t.retryAfterSec('10.0.0.2', 'other'), 0);
    advance(39_000);
    assert.equal(t.retryAfterSec('10.0.0.1'), 1);
    advance(1_000);
    assert.equal(t.retryAfterSec('10.0.0.1'), 0, 'the oldest failure left the window');
    t.recordFailure('10.0.0.1');
    assert.equal(t.retryAfterSec('10.0.0.1'), 10);
  });

  it('clears both counts on success', () => {
    const { throttle: t } = throttle();
    for (let i = 0; i < 3; i += 1) t.recordFailure('10.0.0.1', 'admin');
    t.recordSuccess('10.0.0.1', 'admin');
    assert.equal(t.retryAfterSec('10.0.0.1', 'admin'), 0);
  });

  it('counts an IPv6 /64 together', () => {
    const { throttle: t } = throttle();
    t.recordFailure('2001:db8::1');
    t.recordFailure('2001:db8::2');
    t.recordFailure('2001:db8::3');
    assert.ok(t.retryAfterSec('2001:db8::4') > 0);
    assert.equal(t.retryAfterSec('2001:db9::1'), 0);
  });

  it('keeps a bounded number of keys', () => {
    let now = 0;
    const t = new LoginThrottle({ maxFailures: 1, windowSec: 60, now: () => now, maxKeys: 2 });
    t.recordFailure('10.0.0.1');
    now += 1;
    t.recordFailure('10.0.0.2');
    now += 1;
    t.recordFailure('10.0.0.3');
    assert.equal(t.retryAfterSec('10.0.0.1'), 0, 'the stalest key was evicted');
    assert.ok(t.retryAfterSec('10.0.0.3') > 0);
  });

  it('keeps the lock of an attacked username through 10 000 failures for other names', () => {
    let now = 0;
    const t = new LoginThrottle({ maxFailures: 5, windowSec: 300, now: () => now });
    for (let i = 0; i < 5; i += 1) t.recordFailure(`10.1.0.${i}`, 'admin');
    for (let i = 0; i < 10_000; i += 1) {
      now += 1;
      t.recordFailure(`10.2.${i >> 8}.${i & 255}`, `other-${i}`);
    }
    t.recordFailure('10.3.0.1', 'probe');
    assert.ok(t.retryAfterSec('10.3.0.1', 'admin') > 0, 'admin is still locked');
    assert.equal(t.retryAfterSec('10.3.0.2', 'admin'), 0, 'but not for a clean address');
  });

  it('evicts locked keys last, and only when nothing else is left', () => {
    let now = 0;
    const t = new LoginThrottle({ maxFailures: 2, windowSec: 60, now: () => now, maxKeys: 3 });
    t.recordFailure('10.0.0.1');
    t.recordFailure('10.0.0.1');
    for (let i = 2; i < 50; i += 1) {
      now += 1;
      t.recordFailure(`10.0.0.${i}`);
    }
    assert.ok(t.retryAfterSec('10.0.0.1') > 0, 'the locked address survived the churn');
    for (let i = 100; i < 104; i += 1) {
      t.recordFailure(`10.0.0.${i}`);
      t.recordFailure(`10.0.0.${i}`);
    }
    assert.equal(t.retryAfterSec('10.0.0.1'), 0, 'with only locks left, the oldest lock goes');
    assert.ok(t.retryAfterSec('10.0.0.103') > 0);
  });
});

describe('readLoginForm', () => {
  it('takes non-empty string fields and ignores the rest', () => {
    assert.deepEqual(readLoginForm({ username: 'a', password: 'b', x: 1 }), { username: 'a', password: 'b' });
  });
  it('names every problem', () => {
    assert.deepEqual(readLoginForm(undefined), { problems: ['body: empty'] });
    assert.deepEqual(readLoginForm([]), {
      problems: ['body: must be a JSON object with username and password'],
    });
    assert.deepEqual(readLoginForm(new MalformedJsonBody('at 1')), {
      problems: ['body: invalid JSON (at 1)'],
    });
    assert.deepEqual(readLoginForm({ username: 1, password: '' }), {
      problems: ['username: must be a string', 'password: empty'],
    });
    assert.deepEqual(readLoginForm({}), { problems: ['username: missing', 'password: missing'] });
  });
});

describe('PasswordCheck', () => {
  it('matches exactly', () => {
    const check = new PasswordCheck('admin', 'pw');
    assert.equal(check.matches('admin', 'pw'), true);
    for (const [u, p] of [
      ['admin', 'pw '],
      ['Admin', 'pw'],
      ['admin', ''],
      ['', 'pw'],
      ['adminpw', ''],
    ] as const) {
      assert.equal(check.matches(u, p), false, `${u}/${p}`);
    }
  });
});

describe('parseKeySet', () => {
  it('keeps members with a kty', () => {
    assert.deepEqual(parseKeySet('{"keys":[{"kty":"RSA","n":"x","e":"AQAB"},{"x":1},7]}'), {
      keys: [{ kty: 'RSA', n: 'x', e: 'AQAB' }],
    });
  });
  it('throws with the reason', () => {
    assert.throws(() => parseKeySet('<html>'), /not JSON/);
    assert.throws(() => parseKeySet('[]'), /not a JSON object/);
    assert.throws(() => parseKeySet('{"keys":{}}'), /no "keys" array/);
    assert.throws(() => parseKeySet('{"keys":[{"n":1}]}'), /no usable keys/);
  });
});

describe('hasCanonicalSignature', () => {
  it('accepts canonical base64url and refuses spare bits set in the last character', () => {
    // 32 bytes → 43 characters, the last one carrying 4 bits: "E" is canonical, "F" is not.
    const canonical = Buffer.alloc(32, 0x11).toString('base64url');
    assert.equal(hasCanonicalSignature(`a.b.${canonical}`), true);
    const last = canonical.at(-1) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1] ?? '';
    assert.equal(hasCanonicalSignature(`a.b.${canonical.slice(0, -1)}${sibling}`), false);
    assert.equal(
      hasCanonicalSignature('a.b.'),
      true,
      'an empty signature is canonical (and fails elsewhere)',
    );
    assert.equal(hasCanonicalSignature('a.b.abc='), false, 'no padding');
  });
});
