import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  authConfig,
  loginPair,
  mintProviderToken,
  PASSWORD,
  providerKey,
  startKeySetServer,
  USERNAME,
  type KeySetServer,
  type ProviderKey,
} from './support.js';
import { seededRandom } from '../helpers/seeded-random.js';

/**
 * Sends generated and mutated bodies and headers to the login, refresh and metrics-query routes,
 * and checks that every answer is a 4xx with the envelope or a 200 that the input deserved, never
 * a 5xx, and that the server still answers afterwards. Deterministic: a seeded generator.
 */

const REQUESTS = 10_500;
const CONCURRENCY = 8;
const ISSUER = 'https://fuzz-idp.test/';
const AUDIENCE = 'fuzz-api';

interface Case {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

type Credential = 'password' | 'provider' | 'refresh' | 'access' | 'none';

interface Material {
  access: string;
  refresh: string;
  provider: string;
  rsa: ProviderKey;
}

class CaseMaker {
  constructor(
    private readonly random: () => number,
    private readonly material: Material,
  ) {}

  private int(limit: number): number {
    return Math.floor(this.random() * limit);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  private chance(p: number): boolean {
    return this.random() < p;
  }

  /** A random JSON value of bounded depth. */
  jsonValue(depth = 0): unknown {
    const kind = this.int(depth > 3 ? 6 : 8);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.pick([0, -1, 1.5, 1e308, -1e-308, 2 ** 53, 42]);
      case 3:
        return this.text(this.pick([0, 1, 8, 64, 3000]));
      case 4:
        return this.pick(['access', 'refresh', USERNAME, PASSWORD, '', '__proto__', 'constructor']);
      case 5:
        return this.pick([[], {}, [null], { '': '' }]);
      case 6:
        return Array.from({ length: this.int(5) }, () => this.jsonValue(depth + 1));
      default: {
        const object: Record<string, unknown> = {};
        for (let index = this.int(5); index > 0; index -= 1) {
          object[
            this.pick([
              'username',
              'password',
              'metrics',
              'name',
              'labels',
              'timerange_sec',
              'interval_sec',
              '__proto__',
              'x',
              this.text(4),
            ])
          ] = this.jsonValue(depth + 1);
        }
        return object;
      }
    }
  }

  text(length: number): string {
    const alphabet = 'abcXYZ019 _-./:"\\{}[],\u00e9\u2603\u0000\ud83d\ude00\n\t';
    let result = '';
    for (let index = 0; index < length; index += 1) result += alphabet[this.int(alphabet.length)] ?? 'a';
    return result;
  }

  /** Flips, inserts, deletes or duplicates bytes of `input`. */
  mutate(input: Buffer): Buffer {
    const bytes = [...input];
    for (let rounds = 1 + this.int(4); rounds > 0; rounds -= 1) {
      const at = this.int(bytes.length + 1);
      switch (this.int(5)) {
        case 0:
          if (bytes.length > 0) bytes[Math.min(at, bytes.length - 1)] = this.int(256);
          break;
        case 1:
          bytes.splice(at, 0, this.pick([0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x5c, 0x00, 0xff, 0xc3]));
          break;
        case 2:
          bytes.splice(at, 1 + this.int(4));
          break;
        case 3:
          bytes.length = Math.min(bytes.length, at);
          break;
        default:
          bytes.splice(at, 0, ...bytes.slice(at, at + 1 + this.int(16)));
      }
    }
    return Buffer.from(bytes);
  }

  body(route: 'login' | 'metrics'): Buffer | undefined {
    const validJson =
      route === 'login'
        ? JSON.stringify({ username: USERNAME, password: PASSWORD })
        : JSON.stringify({ metrics: [{ name: 'cpu_idle' }], timerange_sec: 10, interval_sec: 2 });
    switch (this.int(9)) {
      case 0:
        return undefined;
      case 1:
        return Buffer.from(validJson);
      case 2:
      case 3:
        return this.mutate(Buffer.from(validJson));
      case 4:
        return Buffer.from(JSON.stringify(this.jsonValue()));
      case 5:
        return this.mutate(Buffer.from(JSON.stringify(this.jsonValue())));
      case 6: {
        const depth = this.pick([100, 5000, 20_000]);
        return Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);
      }
      case 7:
        return Buffer.from(
          this.pick(['', ' ', '\n', 'null', '0', '""', '{}', '[]', '{"a":1}{"b":2}', '\ufeff{}']),
        );
      default: {
        const record = JSON.parse(validJson) as Record<string, unknown>;
        const key = this.pick(Object.keys(record));
        record[key] = this.jsonValue();
        return Buffer.from(JSON.stringify(record));
      }
    }
  }

  contentType(): string | undefined {
    return this.pick([
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json;',
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonx',
      'multipart/form-data; boundary=x',
      '',
    ]);
  }

  /** An Authorization header built around the token the route wants, or undefined. */
  authorization(valid: string): string | undefined {
    switch (this.int(10)) {
      case 0:
        return undefined;
      case 1:
      case 2:
      case 3:
        return `${this.pick(['Bearer', 'bearer', 'BEARER'])} ${valid}`;
      case 4:
        return `Bearer ${this.mutate(Buffer.from(valid))
          .toString('latin1')
          .replace(/[^\x21-\x7e]/g, '')}`;
      case 5:
        return `Bearer ${this.pick([this.material.access, this.material.refresh, this.material.provider])}`;
      case 6:
        return this.pick([
          '',
          'Bearer',
          'Bearer ',
          'Basic YWRtaW46cGFzcw==',
          `Token ${valid}`,
          'Bearer a.b.c',
          'Bearer a.b.c.d.e',
        ]);
      case 7:
        return `Bearer ${'x'.repeat(this.pick([100, 9000, 14_000]))}`;
      case 8:
        return `Bearer ${this.text(40).replace(/[^\x21-\x7e]/g, '.')}`;
      default:
        return `Bearer ${valid.split('.').reverse().join('.')}`;
    }
  }

  next(): Case {
    const route = this.int(10);
    if (route >= 4 && route < 6) {
      const authorization = this.authorization(this.material.refresh);
      return {
        method: 'GET',
        path: '/api/login/refresh',
        headers: authorization === undefined ? {} : { authorization },
        body: undefined,
      };
    }
    const login = route < 4;
    const body = this.body(login ? 'login' : 'metrics');
    const authorization = this.authorization(login ? this.material.provider : this.material.access);
    const contentType = this.contentType();
    const headers: Record<string, string> = {};
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (authorization !== undefined) headers.authorization = authorization;
    const path = login ? '/api/login' : this.pick(['/api/v3/metrics', '/api/v3/metrics/']);
    return { method: 'POST', path, headers, body };
  }
}

/** The content types the server reads as JSON (docs/api.md#conventions). */
const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

/** The credential a case carries intact, judged from the request alone: only then may it get 200. */
function deservedCredential(fuzzCase: Case, material: Material): Credential {
  const token = /^bearer (\S+)$/i.exec(fuzzCase.headers.authorization ?? '')?.[1];
  if (fuzzCase.path === '/api/login/refresh') return token === material.refresh ? 'refresh' : 'none';
  if (fuzzCase.path !== '/api/login') return token === material.access ? 'access' : 'none';
  if (JSON_TYPE.test(fuzzCase.headers['content-type'] ?? '') && fuzzCase.body !== undefined) {
    try {
      const parsed = JSON.parse(fuzzCase.body.toString('utf8')) as {
        username?: unknown;
        password?: unknown;
      } | null;
      if (parsed?.username === USERNAME && parsed.password === PASSWORD) return 'password';
    } catch {
      // Not JSON: no password credential.
    }
  }
  return token === material.provider ? 'provider' : 'none';
}

interface Reply {
  status: number;
  contentType: string | undefined;
  text: string;
}

function send(agent: Agent, base: string, fuzzCase: Case): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${fuzzCase.path}`,
      { method: fuzzCase.method, headers: fuzzCase.headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(fuzzCase.body);
  });
}

function check(fuzzCase: Case, reply: Reply, material: Material): string | undefined {
  const label = `${fuzzCase.method} ${fuzzCase.path} ${JSON.stringify(fuzzCase.headers).slice(0, 2000)} body=${fuzzCase.body?.toString('latin1').slice(0, 200) ?? '-'}`;
  if (reply.status >= 500 || reply.status < 200)
    return `${reply.status} for ${label}: ${reply.text.slice(0, 300)}`;
  if (reply.contentType !== 'application/json; charset=utf-8')
    return `content type ${reply.contentType} for ${label}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.text);
  } catch {
    return `not JSON (${reply.status}) for ${label}`;
  }
  if (reply.status === 200) {
    if (deservedCredential(fuzzCase, material) === 'none') return `200 without credentials for ${label}`;
    if (fuzzCase.path === '/api/login') {
      const pair = body as { access_token?: unknown; refresh_token?: unknown };
      if (typeof pair.access_token !== 'string' || typeof pair.refresh_token !== 'string')
        return `bad pair for ${label}`;
    } else if (fuzzCase.path === '/api/login/refresh') {
      if (typeof (body as { access_token?: unknown }).access_token !== 'string')
        return `bad refresh for ${label}`;
    }
    return undefined;
  }
  if (reply.status < 400) return `unexpected ${reply.status} for ${label}`;
  const envelope = body as { code?: unknown; message?: unknown; details?: unknown };
  const ok =
    envelope.code === reply.status &&
    typeof envelope.message === 'string' &&
    Array.isArray(envelope.details) &&
    envelope.details.every((detail) => typeof detail === 'string');
  return ok ? undefined : `not an envelope (${reply.status}) for ${label}: ${reply.text.slice(0, 300)}`;
}

describe('fuzzing the login, refresh and metrics-query routes', () => {
  let server: TestServer;
  let keySet: KeySetServer;
  let material: Material;

  before(async () => {
    const rsa = await providerKey('fuzz-rsa', 'RS256');
    keySet = await startKeySetServer([rsa]);
    server = await startServer({
      config: {
        ...authConfig({
          throttle: { max_failures: 1_000_000, delay_ms: 1 },
          auth0: {
            enable: true,
            tenants: [
              {
                domain: 'fuzz-idp.test',
                audience: AUDIENCE,
                clientid: 'fuzz',
                users: ['fuzzer'],
                issuer: ISSUER,
                jwks_url: keySet.jwksUrl,
              },
            ],
          },
        }),
        metrics: { enable: true, interval_sec: 1, range_sec: 60 },
      },
    });
    const pair = await loginPair(server.url);
    material = {
      access: pair.access_token,
      refresh: pair.refresh_token,
      provider: await mintProviderToken(rsa, { iss: ISSUER, aud: AUDIENCE, sub: 'fuzzer' }),
      rsa,
    };
  });
  after(async () => {
    await server.close();
    await keySet.close();
  });

  it(`answers ${REQUESTS} generated requests with a 4xx envelope or a deserved 200, never a 5xx`, async () => {
    const maker = new CaseMaker(seededRandom(Number(process.env.FUZZ_SEED ?? 20_240_601)), material);
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    try {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (sent < REQUESTS) {
            sent += 1;
            const fuzzCase = maker.next();
            const reply = await send(agent, server.url, fuzzCase);
            statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
            const problem = check(fuzzCase, reply, material);
            if (problem !== undefined && failures.length < 20) failures.push(problem);
          }
        }),
      );
    } finally {
      agent.destroy();
    }
    assert.deepEqual(failures, []);
    assert.ok(sent >= 10_000);
    // The generator reached both sides: valid logins and refreshes, and plenty of refusals.
    assert.ok((statuses.get(200) ?? 0) > 100, JSON.stringify([...statuses]));
    assert.ok((statuses.get(401) ?? 0) > 1000, JSON.stringify([...statuses]));
    assert.ok((statuses.get(400) ?? 0) > 100, JSON.stringify([...statuses]));
  });

  it('still answers afterwards', async () => {
    const ping = await fetch(`${server.url}/ping`);
    assert.equal(await ping.text(), 'pong');
    const pair = await loginPair(server.url);
    assert.equal(typeof pair.access_token, 'string');
  });
});
