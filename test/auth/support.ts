import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTlsServer, request as httpsRequest } from 'node:https';
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
  /** The body's bytes as received (e.g. gzip-encoded). */
  body: Buffer;
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
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: body.toString('utf8'), body });
        });
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

/** Parses an error answer and checks the envelope's shape (docs/api.md#conventions). */
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

/** A certificate for `127.0.0.1` (IP SAN, valid until 2126) and its key, from `fixtures/`. */
export interface LoopbackTls {
  key: string;
  cert: string;
}

export function loopbackTls(): LoopbackTls {
  const read = (name: string): string => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
  return { key: read('loopback-tls.key'), cert: read('loopback-tls.crt') };
}

/**
 * A `fetch` over node:https that trusts `ca` (the test certificate). Node 20's global fetch reads
 * its trusted certificates once at process start (`NODE_EXTRA_CA_CERTS`), so it cannot be told to
 * trust one made for a test. What a key set fetch uses: method, headers, signal; status, headers
 * and body of the answer.
 */
export function fetchTrusting(ca: string): typeof fetch {
  return (input, init) =>
    new Promise((resolve, reject) => {
      const url = input instanceof Request ? input.url : input;
      const request = httpsRequest(
        url,
        {
          method: init?.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init?.headers)),
          ca,
          signal: init?.signal ?? undefined,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const headers = new Headers();
            const raw = response.rawHeaders;
            for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? '', raw[i + 1] ?? '');
            resolve(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 0, headers }));
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end();
    });
}

/** Serves the key set over HTTPS with `tls` when given (its `url` is then `https://127.0.0.1:<port>`). */
export async function startKeySetServer(
  keys: ProviderKey[],
  port = 0,
  tls?: LoopbackTls,
): Promise<KeySetServer> {
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
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
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
  };
  const server: Server = tls === undefined ? createServer(handler) : createTlsServer(tls, handler);
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const scheme = tls === undefined ? 'http' : 'https';
  state.url = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
