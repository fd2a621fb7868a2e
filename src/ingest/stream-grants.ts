import { createHash, randomBytes } from 'node:crypto';
import type { RunCredential } from '../process/index.js';

/** One run's token: valid for the streams it was given, until it is revoked. */
export interface StreamGrant extends RunCredential {
  /** What a URL carries. */
  readonly token: string;
  /** Lets the token publish and play `resource` (an RTMP path `/live/abc`, an SRT resource). */
  allow(resource: string): void;
}

/**
 * Per-run ingest tokens (docs/security.md#no-secret-where-others-can-read-it). `{rtmp}` and
 * `{srt}` put a token into the URL they write, and that URL is an encoder's command line, which
 * every local user reads in `/proc/<pid>/cmdline`. So an encoder run gets a token of its own
 * instead of `rtmp.token` or `srt.token`: it opens only the streams the run's placeholders named,
 * and only while the run lasts. Held in memory only (a restart ends every run); looked up by the
 * token's SHA-256, so the lookup's time says nothing about how much of a guess was right.
 */
export class StreamGrants {
  /** By the SHA-256 of each token. */
  private readonly grants = new Map<string, { token: string; resources: Set<string> }>();

  /** `onChange` hears of every change (the SRT listener keeps its own copy for its handshakes). */
  constructor(private readonly onChange: () => void = () => undefined) {}

  /** A fresh random token that opens nothing until `allow` names a stream. */
  issue(): StreamGrant {
    const secret = randomBytes(18).toString('base64url');
    const key = digest(secret);
    const resources = new Set<string>();
    this.grants.set(key, { token: secret, resources });
    return {
      token: secret,
      secrets: [secret],
      allow: (resource) => {
        if (!this.grants.has(key) || resources.has(resource)) return;
        resources.add(resource);
        this.onChange();
      },
      revoke: () => {
        if (this.grants.delete(key)) this.onChange();
      },
    };
  }

  /** Whether `token` is a live grant for `resource`. */
  allows(token: string, resource: string): boolean {
    if (token === '') return false;
    return this.grants.get(digest(token))?.resources.has(resource) === true;
  }

  /** Each live token with its streams, for a listener that checks tokens itself (SRT's addon). */
  list(): Array<{ token: string; resources: string[] }> {
    return [...this.grants.values()].map(({ token, resources }) => ({ token, resources: [...resources] }));
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
