import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { pino, type Logger } from 'pino';
import type { Config } from '../../src/config/index.js';
import type { DeepPartial } from '../helpers/server.js';

export const USERNAME = 'admin';
export const PASSWORD = 'correct horse battery staple';
export const SECRET = 'test-secret-0123456789abcdef0123456789';

/** Config with auth on and known credentials; `extra` is merged over the auth part. */
export function authConfig(extra: DeepPartial<Config['api']['auth']> = {}): DeepPartial<Config> {
  return {
    api: {
      auth: {
        enable: true,
        username: USERNAME,
        password: PASSWORD,
        ...extra,
        jwt: { secret: SECRET, ...extra.jwt },
        throttle: { delay_ms: 5, ...extra.throttle },
      },
    },
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Source address of the connection, e.g. `127.0.0.2`. */
  localAddress?: string;
}

/** One HTTP request with node:http, so the source address and any header can be chosen. */
export function rawRequest(url: string, options: RawOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: options.localAddress,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `POST /api/login` with a JSON body. */
export function postLogin(
  url: string,
  body: unknown,
  options: Omit<RawOptions, 'body' | 'method'> = {},
): Promise<Answer> {
  return rawRequest(`${url}/api/login`, {
    ...options,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify(body),
  });
}

export async function loginPair(url: string): Promise<{ access_token: string; refresh_token: string }> {
  const answer = await postLogin(url, { username: USERNAME, password: PASSWORD });
  if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.text}`);
  return JSON.parse(answer.text) as { access_token: string; refresh_token: string };
}

export interface Envelope {
  code: number;
  message: string;
  details: string[];
}

/** Parses an error answer and checks the envelope's shape (SPEC §1.1). */
export function envelopeOf(answer: Answer): Envelope {
  if (answer.headers['content-type'] !== 'application/json; charset=utf-8') {
    throw new Error(`not JSON (${answer.headers['content-type']}): ${answer.status} ${answer.text}`);
  }
  const body = JSON.parse(answer.text) as Envelope;
  if (
    body.code !== answer.status ||
    typeof body.message !== 'string' ||
    !Array.isArray(body.details) ||
    !body.details.every((detail) => typeof detail === 'string')
  ) {
    throw new Error(`not an envelope: ${answer.status} ${answer.text}`);
  }
  return body;
}

/** The payload of a JWT, decoded without verification. */
export function payloadOf(token: string): Record<string, unknown> {
  const part = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A wall clock the test can move forward. */
export function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    advance(ms: number) {
      offset += ms;
    },
  };
}

/** A pino logger whose lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      callback();
    },
  });
  return {
    logger: pino({ level: 'info' }, stream),
    lines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** A signing key of a test identity provider, with its public JWK. */
export interface ProviderKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

export async function providerKey(kid: string, alg: 'RS256' | 'ES256'): Promise<ProviderKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

/** Signs a provider access token; `claims` override the defaults, `header` the protected header. */
export function mintProviderToken(
  key: ProviderKey,
  claims: JWTPayload,
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
    .sign(key.privateKey);
}

/**
 * A key-set server on loopback: serves `{keys}` of the current keys at `/.well-known/jwks.json`
 * and counts the requests. `hang` makes it accept requests and never answer.
 */
export interface KeySetServer {
  url: string;
  jwksUrl: string;
  /** Requests received for the key set. */
  fetches: number;
  keys: ProviderKey[];
  hang: boolean;
  close(): Promise<void>;
}

export async function startKeySetServer(keys: ProviderKey[], port = 0): Promise<KeySetServer> {
  const held: Array<() => void> = [];
  const state: KeySetServer = {
    url: '',
    jwksUrl: '',
    fetches: 0,
    keys,
    hang: false,
    async close() {
      for (const release of held) release();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    state.fetches += 1;
    if (state.hang) {
      held.push(() => res.destroy());
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: state.keys.map((key) => key.jwk) }));
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.jwksUrl = `${state.url}/.well-known/jwks.json`;
  return state;
}

/** A port on loopback where nothing listens (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
