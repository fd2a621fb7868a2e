import { type KeyObject } from 'node:crypto';
import { AcmeProblem, problemOf, retryAfterMs } from './acme-problem.js';
import type { AcmeResponse, AcmeTransport } from './acme-transport.js';
import { certificateRequest } from './csr.js';
import { base64url, jwkThumbprint, publicJwk, signJws } from './jws.js';

/** Where HTTP-01 key authorizations are published (the plain listener's challenge route). */
export interface Http01Publisher {
  publish(token: string, keyAuthorization: string): void;
  withdraw(token: string): void;
}

export interface AcmeClientOptions {
  directoryUrl: string;
  accountKey: KeyObject;
  /** The account's URL when known (stored after the first registration). */
  accountUrl?: string;
  email: string;
  transport: AcmeTransport;
  now: () => number;
  /** Waits between two polls of an authorization or order. */
  sleep: (ms: number) => Promise<void>;
  /** How long one authorization or order may stay pending, ms. */
  pollLimitMs: number;
}

interface Directory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
}

interface Order {
  status: string;
  authorizations: string[];
  finalize: string;
  certificate?: string;
  error?: { detail?: string };
}

interface Authorization {
  status: string;
  identifier: { value: string };
  challenges: {
    type: string;
    url: string;
    token: string;
    status: string;
    error?: { type?: string; detail?: string };
  }[];
}

/** Tries a request again this often after `badNonce` (RFC 8555 §6.5: the client should retry). */
const BAD_NONCE_RETRIES = 5;
const POLL_INTERVAL_MS = 1000;

/**
 * The client side of RFC 8555 that streamcore needs: an account (ES256 key), an order for a set
 * of DNS names, HTTP-01 for each authorization, finalize with a CSR, download the chain. Written
 * on node:crypto rather than taken from npm: see docs/tls.md, "How certificates are obtained".
 */
export class AcmeClient {
  private directory: Directory | undefined;
  private nonces: string[] = [];
  private accountUrl: string | undefined;

  constructor(private readonly options: AcmeClientOptions) {
    this.accountUrl = options.accountUrl;
  }

  /** The account URL (registers the account on first use); kept by the caller for the next start. */
  async account(): Promise<string> {
    if (this.accountUrl !== undefined) return this.accountUrl;
    const directory = await this.loadDirectory();
    const contact = this.options.email === '' ? [] : [`mailto:${this.options.email}`];
    const answer = await this.post(directory.newAccount, { termsOfServiceAgreed: true, contact }, 'jwk');
    const location = answer.headers.location;
    if (location === undefined)
      throw new AcmeProblem('streamcore:protocol', 'the new account has no URL', undefined, undefined);
    this.accountUrl = location;
    return location;
  }

  /** Runs one order for `names` to its end and answers the PEM chain, leaf first. */
  async obtain(
    names: readonly string[],
    certificateKey: KeyObject,
    http01: Http01Publisher,
  ): Promise<string> {
    const directory = await this.loadDirectory();
    await this.account();
    const created = await this.post(directory.newOrder, {
      identifiers: names.map((value) => ({ type: 'dns', value })),
    });
    const orderUrl = created.headers.location;
    if (orderUrl === undefined)
      throw new AcmeProblem('streamcore:protocol', 'the new order has no URL', undefined, undefined);
    let order = JSON.parse(created.body.toString('utf8')) as Order;
    for (const url of order.authorizations) await this.authorize(url, http01);
    order = await this.pollUntil(orderUrl, (next: Order) => next.status !== 'pending', undefined);
    if (order.status !== 'ready') throw this.orderFailure(order, undefined);
    const csr = certificateRequest(names, certificateKey);
    await this.post(order.finalize, { csr: base64url(csr) });
    order = await this.pollUntil(
      orderUrl,
      (next: Order) => next.status !== 'processing' && next.status !== 'ready',
      undefined,
    );
    if (order.status !== 'valid' || order.certificate === undefined)
      throw this.orderFailure(order, undefined);
    const chain = await this.post(order.certificate, undefined);
    return chain.body.toString('utf8');
  }

  private async authorize(url: string, http01: Http01Publisher): Promise<void> {
    const authorization = await this.postAsGet<Authorization>(url);
    const name = authorization.identifier.value;
    if (authorization.status === 'valid') return;
    const challenge = authorization.challenges.find((candidate) => candidate.type === 'http-01');
    if (challenge === undefined) {
      throw new AcmeProblem(
        'streamcore:no-http-01',
        'the CA offers no HTTP-01 challenge for this name',
        name,
        undefined,
      );
    }
    http01.publish(
      challenge.token,
      `${challenge.token}.${jwkThumbprint(publicJwk(this.options.accountKey))}`,
    );
    try {
      await this.post(challenge.url, {});
      const done = await this.pollUntil(url, (next: Authorization) => next.status !== 'pending', name);
      if (done.status !== 'valid') {
        const failed = done.challenges.find((candidate) => candidate.type === 'http-01');
        throw new AcmeProblem(
          failed?.error?.type ?? 'streamcore:challenge',
          failed?.error?.detail ?? `the authorization is ${done.status}`,
          name,
          undefined,
        );
      }
    } finally {
      http01.withdraw(challenge.token);
    }
  }

  private orderFailure(order: Order, name: string | undefined): AcmeProblem {
    return new AcmeProblem(
      'streamcore:order',
      order.error?.detail ?? `the order is ${order.status}`,
      name,
      undefined,
    );
  }

  private async pollUntil<T>(
    url: string,
    done: (document: T) => boolean,
    name: string | undefined,
  ): Promise<T> {
    const deadline = this.options.now() + this.options.pollLimitMs;
    for (;;) {
      const answer = await this.post(url, undefined);
      const document = JSON.parse(answer.body.toString('utf8')) as T;
      if (done(document)) return document;
      if (this.options.now() >= deadline) {
        throw new AcmeProblem(
          'streamcore:timeout',
          `the CA did not finish within ${this.options.pollLimitMs / 1000} s`,
          name,
          undefined,
        );
      }
      const asked = retryAfterMs(answer.headers['retry-after'], this.options.now());
      await this.options.sleep(Math.min(asked ?? POLL_INTERVAL_MS, 10_000));
    }
  }

  private async postAsGet<T>(url: string): Promise<T> {
    return JSON.parse((await this.post(url, undefined)).body.toString('utf8')) as T;
  }

  /** A signed POST; `payload` undefined is a POST-as-GET. Retries after `badNonce`. */
  private async post(url: string, payload: unknown, signer: 'kid' | 'jwk' = 'kid'): Promise<AcmeResponse> {
    for (let attempt = 0; ; attempt += 1) {
      const nonce = await this.nonce();
      const signedBy =
        signer === 'jwk' || this.accountUrl === undefined
          ? { jwk: publicJwk(this.options.accountKey) }
          : { kid: this.accountUrl };
      const body = JSON.stringify(
        signJws(this.options.accountKey, { url, nonce, signer: signedBy }, payload),
      );
      const answer = await this.send('POST', url, body);
      if (answer.status < 400) return answer;
      const problem = problemOf(
        answer.status,
        answer.headers,
        answer.body,
        this.options.now(),
        `POST ${url}`,
      );
      if (problem.kind !== 'badNonce' || attempt >= BAD_NONCE_RETRIES) throw problem;
    }
  }

  private async nonce(): Promise<string> {
    const kept = this.nonces.pop();
    if (kept !== undefined) return kept;
    const directory = await this.loadDirectory();
    await this.send('HEAD', directory.newNonce);
    const fresh = this.nonces.pop();
    if (fresh === undefined)
      throw new AcmeProblem('streamcore:protocol', 'the CA gave no nonce', undefined, undefined);
    return fresh;
  }

  private async loadDirectory(): Promise<Directory> {
    if (this.directory !== undefined) return this.directory;
    const answer = await this.send('GET', this.options.directoryUrl);
    if (answer.status >= 400) {
      throw problemOf(
        answer.status,
        answer.headers,
        answer.body,
        this.options.now(),
        `GET ${this.options.directoryUrl}`,
      );
    }
    const directory = JSON.parse(answer.body.toString('utf8')) as Partial<Directory>;
    if (
      typeof directory.newNonce !== 'string' ||
      typeof directory.newAccount !== 'string' ||
      typeof directory.newOrder !== 'string'
    ) {
      throw new AcmeProblem(
        'streamcore:protocol',
        `${this.options.directoryUrl} is not an ACME directory`,
        undefined,
        undefined,
      );
    }
    this.directory = directory as Directory;
    return this.directory;
  }

  /** Every answer's Replay-Nonce is kept for the next request (RFC 8555 §7.2). */
  private async send(method: 'GET' | 'HEAD' | 'POST', url: string, body?: string): Promise<AcmeResponse> {
    let answer: AcmeResponse;
    try {
      answer = await this.options.transport({ method, url, body });
    } catch (error) {
      throw new AcmeProblem(
        'streamcore:unreachable',
        `cannot reach the ACME server at ${url}: ${(error as Error).message}`,
        undefined,
        undefined,
      );
    }
    const nonce = answer.headers['replay-nonce'];
    if (typeof nonce === 'string') this.nonces.push(nonce);
    return answer;
  }
}
