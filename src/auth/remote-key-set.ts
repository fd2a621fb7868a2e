import {
  createLocalJWKSet,
  errors,
  type CryptoKey,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
} from 'jose';
import type { Logger } from 'pino';
import { parseKeySet } from './key-set-document.js';

export interface RemoteKeySetOptions {
  /** Where the key set is fetched. */
  url: string;
  fetch: typeof fetch;
  /** Wall clock, milliseconds. */
  now: () => number;
  logger: Logger;
  /** Limit on one fetch, headers and body, milliseconds. */
  timeoutMs?: number;
  /** Least time between two fetch attempts, milliseconds (a flood of unknown `kid`s causes one). */
  cooldownMs?: number;
  /** Age after which a cached set is re-fetched before use, milliseconds. */
  maxAgeMs?: number;
  /** Largest key set accepted, bytes. */
  maxBytes?: number;
}

const KEY_SET_DEFAULTS = {
  timeoutMs: 5_000,
  cooldownMs: 30_000,
  maxAgeMs: 600_000,
  maxBytes: 1024 * 1024,
} as const;

/** The key set could not be fetched and no earlier copy is at hand. */
export class KeySetUnavailableError extends Error {
  constructor(
    message: string,
    /** Seconds until the next fetch attempt is allowed. */
    readonly retryAfterSec: number,
  ) {
    super(message);
    this.name = 'KeySetUnavailableError';
  }
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * An identity provider's key set (docs/auth.md#identity-provider-tenants), fetched lazily on first use, cached, and re-fetched
 * when it is older than `maxAgeMs` or a token names a `kid` it lacks. Fetches are single-flight
 * (concurrent callers share one), time-limited, and at most one starts per `cooldownMs`, whether
 * the last one succeeded or not; a failed fetch keeps the last good set. Modelled on jose's
 * `createRemoteJWKSet`, which does not cool down after a failure nor keep its set when a refresh
 * fails, and reads `Date.now()` rather than an injected clock.
 */
export class RemoteKeySet {
  private local: LocalKeySet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;
  private lastError = '';
  private readonly timeoutMs: number;
  private readonly cooldownMs: number;
  private readonly maxAgeMs: number;
  private readonly maxBytes: number;
  /** Fetch attempts and failed attempts so far. */
  readonly counts = { fetches: 0, failures: 0 };

  constructor(private readonly options: RemoteKeySetOptions) {
    this.timeoutMs = checkDuration(options.timeoutMs, KEY_SET_DEFAULTS.timeoutMs, 'timeoutMs');
    this.cooldownMs = checkDuration(options.cooldownMs, KEY_SET_DEFAULTS.cooldownMs, 'cooldownMs');
    this.maxAgeMs = checkDuration(options.maxAgeMs, KEY_SET_DEFAULTS.maxAgeMs, 'maxAgeMs');
    this.maxBytes = checkDuration(options.maxBytes, KEY_SET_DEFAULTS.maxBytes, 'maxBytes');
  }

  /** Key resolver for jose's `jwtVerify`. Throws `KeySetUnavailableError` or a jose JWKS error. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    if (this.local === undefined || this.options.now() - this.fetchedAt >= this.maxAgeMs)
      await this.refresh();
    const local = this.requireLocal();
    try {
      return await local(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      const outcome = await this.refresh();
      if (outcome === 'cooling-down') throw error;
      if (outcome === 'failed') throw this.unavailable();
      return this.requireLocal()(header, token);
    }
  };

  /** Starts or joins a fetch unless one started less than `cooldownMs` ago. */
  private async refresh(): Promise<'fetched' | 'failed' | 'cooling-down'> {
    if (this.pending === undefined) {
      const now = this.options.now();
      if (now - this.attemptedAt < this.cooldownMs) return 'cooling-down';
      this.attemptedAt = now;
      this.pending = this.fetchOnce().finally(() => {
        this.pending = undefined;
      });
    }
    await this.pending;
    return this.lastError === '' ? 'fetched' : 'failed';
  }

  private requireLocal(): LocalKeySet {
    if (this.local === undefined) throw this.unavailable();
    return this.local;
  }

  private unavailable(): KeySetUnavailableError {
    const waitMs = Math.max(0, this.attemptedAt + this.cooldownMs - this.options.now());
    return new KeySetUnavailableError(
      `key set could not be fetched (${this.lastError || 'not fetched yet'}); next attempt in ${Math.ceil(waitMs / 1000)} s`,
      Math.ceil(waitMs / 1000),
    );
  }

  /** One fetch; records the outcome instead of throwing. */
  private async fetchOnce(): Promise<void> {
    this.counts.fetches += 1;
    const { url, logger } = this.options;
    try {
      const text = await this.fetchText();
      const local = createLocalJWKSet(parseKeySet(text));
      this.local = local;
      this.fetchedAt = this.options.now();
      this.lastError = '';
      logger.info({ url, keys: local.jwks().keys.length }, 'identity provider key set fetched');
    } catch (error) {
      this.counts.failures += 1;
      this.lastError = describeFetchError(error, this.timeoutMs);
      logger.warn({ url, reason: this.lastError }, 'identity provider key set fetch failed');
    }
  }

  private async fetchText(): Promise<string> {
    const response = await this.options.fetch(this.options.url, {
      method: 'GET',
      redirect: 'manual',
      headers: { accept: 'application/json, application/jwk-set+json' },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`HTTP ${response.status}`);
    }
    return readBounded(response, this.maxBytes);
  }
}

async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new Error(`larger than ${maxBytes} bytes`);
  }
  if (response.body === null) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error(`larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code === undefined ? cause.message : `${code}: ${cause.message}`;
  }
  return error.message;
}

function checkDuration(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0)
    throw new TypeError(`RemoteKeySet option ${name} must be a non-negative number`);
  return value;
}
