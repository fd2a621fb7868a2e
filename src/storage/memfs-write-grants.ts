import { randomBytes, timingSafeEqual } from 'node:crypto';
import { secretDigest, type BasicCredentials } from './basic-auth.js';

/** A basic-auth credential that may write only under some memfs paths, until it is revoked. */
export interface WriteGrant {
  readonly username: string;
  readonly password: string;
  /** Ends the grant at once; further writes with it are answered 401. Idempotent. */
  readonly revoke: () => void;
}

/** What a credential may do with one memfs path. */
export type GrantDecision =
  /** The credential is a live grant and the path lies under one of its prefixes. */
  | 'granted'
  /** A live grant, but the path lies outside its prefixes. */
  | 'out-of-scope'
  /** Not a live grant (never issued, revoked, or a wrong password). */
  | 'unknown';

interface Grant {
  passwordDigest: Buffer;
  prefixes: readonly string[];
}

/** Prefix of every grant's username: a human's username never collides with one by chance. */
const USERNAME_PREFIX = 'run-';

/**
 * Short-lived memfs write credentials, one per encoder run (docs/storage.md#the-contract, issue 24 item 4): each
 * names the memfs path prefixes its encoder's outputs write and lives until the run ends. An
 * encoder's command line is readable by every local user (`/proc/<pid>/cmdline`), so what it
 * carries must be worth nothing beyond that one run's own files. Held in memory only: a restart
 * of the server ends every run, and with it every grant.
 */
export class MemfsWriteGrants {
  private readonly grants = new Map<string, Grant>();

  /**
   * A fresh random credential for writes under `prefixes` (memfs paths such as `/live/cam1`; a
   * path is covered when it starts with one of them).
   */
  issue(prefixes: readonly string[]): WriteGrant {
    let username: string;
    do username = USERNAME_PREFIX + randomBytes(9).toString('base64url');
    while (this.grants.has(username));
    const password = randomBytes(24).toString('base64url');
    this.grants.set(username, { passwordDigest: secretDigest(password), prefixes: [...prefixes] });
    return { username, password, revoke: () => this.grants.delete(username) };
  }

  /** What `given` may do with the memfs file `path` (a normalized path, `/a/b.ts`). */
  decide(given: BasicCredentials, path: string): GrantDecision {
    const grant = this.grants.get(given.username);
    if (grant === undefined || !timingSafeEqual(secretDigest(given.password), grant.passwordDigest)) {
      return 'unknown';
    }
    return grant.prefixes.some((prefix) => path.startsWith(prefix)) ? 'granted' : 'out-of-scope';
  }
}
