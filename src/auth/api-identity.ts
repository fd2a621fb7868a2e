import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import type { AccessVerifier } from './access-verifier.js';

/** The API family and the level clients check (docs/api.md#identity-of-the-api); not a claim about the implementation. */
const APP = 'datarhei-core';
const MINIMAL_VERSION = '16.0.0';
const FULL_VERSION = '16.16.0';

export interface ApiIdentityOptions {
  /** `name` of the configuration in effect (a reload may change it). */
  name: () => string;
  id: string;
  /** The `auths` list (docs/api.md#identity-of-the-api), as authentication is now (a reload may turn it on or off). */
  auths: () => readonly string[];
  /** Server start, milliseconds since the epoch (for the uptime). */
  startedAtMs: number;
  /**
   * When the configuration in effect was loaded (start or reload), ms: the `created_at` clients
   * such as the Restreamer UI watch to see that a restart they asked for has happened.
   */
  loadedAtMs: () => number;
  /** Wall clock, milliseconds. */
  now: () => number;
  /** This implementation's version (package.json). */
  serverVersion: string;
  /** Undefined while auth is disabled: everyone gets the full form. */
  verifier: () => AccessVerifier | undefined;
}

/**
 * `GET /api` and `GET /api/` (docs/api.md#identity-of-the-api): the full form for a valid access token (or with auth
 * disabled), the minimal form otherwise; always 200.
 */
export function registerApiIdentity(server: FastifyInstance, options: ApiIdentityOptions): void {
  // Made again only when the list changes (authentication turned on or off).
  let minimalOf: { auths: readonly string[]; text: string } | undefined;
  const minimal = (auths: readonly string[]): string => {
    if (minimalOf?.auths !== auths) {
      minimalOf = { auths, text: JSON.stringify({ app: APP, auths, version: { number: MINIMAL_VERSION } }) };
    }
    return minimalOf.text;
  };
  const version = {
    number: FULL_VERSION,
    repository_commit: '',
    repository_branch: '',
    build_date: '',
    arch: `${process.platform}/${process.arch}`,
    compiler: `node ${process.version}`,
  };
  const full = (): object => ({
    app: APP,
    auths: options.auths(),
    name: options.name(),
    id: options.id,
    created_at: new Date(options.loadedAtMs()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    uptime_seconds: Math.max(0, Math.floor((options.now() - options.startedAtMs) / 1000)),
    version,
    server: { name: 'streamcore', version: options.serverVersion },
  });

  for (const url of ['/api', '/api/']) {
    server.get(url, async (request, reply) => {
      const verifier = options.verifier();
      const authorized = verifier === undefined || (await verifier.isValid(request.headers.authorization));
      return reply
        .type('application/json; charset=utf-8')
        .send(authorized ? full() : minimal(options.auths()));
    });
  }
}

/** The `version` of package.json, read once at start. */
export async function readServerVersion(): Promise<string> {
  // From src/auth/ and from dist/auth/ alike, the package root is two levels up.
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : '0.0.0';
}
