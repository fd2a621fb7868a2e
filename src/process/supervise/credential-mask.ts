import { maskCredentials } from '../ffmpeg/index.js';

/** Hides credentials in a text the API shows or a metric label carries (docs/processes.md#process-config, docs/processes.md#metrics-of-processes). */
export type CredentialMask = (text: string) => string;

/**
 * Secrets shorter than this are not replaced where they stand alone: a one- or two-character
 * password would turn every log line into noise. They are still hidden where they sit in a URL's
 * user info or an `Authorization` header.
 */
export const MIN_LITERAL_SECRET_LENGTH = 4;

/**
 * `maskCredentials` plus every literal occurrence of the server's own `secrets` (any form in
 * which they may appear in ffmpeg's output, see `memfsSecrets`), each replaced by `***`. A
 * password that breaks the URL pattern (a `'` in it) or a header line ffmpeg prints in a form
 * nobody foresaw still does not reach the API.
 */
export function createCredentialMask(secrets: readonly string[]): CredentialMask {
  const literals = literalMask(secrets);
  return literals === undefined ? maskCredentials : (text) => maskCredentials(literals(text));
}

/** Replaces each literal occurrence of `secrets` by `***`; undefined when none is long enough. */
function literalMask(secrets: readonly string[]): CredentialMask | undefined {
  const literal = [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_LITERAL_SECRET_LENGTH)
    // The longest first, so that a secret containing another is replaced whole.
    .sort((a, b) => b.length - a.length);
  if (literal.length === 0) return undefined;
  return (text) => {
    let masked = text;
    for (const secret of literal) if (masked.includes(secret)) masked = masked.replaceAll(secret, '***');
    return masked;
  };
}

/**
 * The forms in which the memfs credentials can show up in what ffmpeg writes: the password as
 * configured and URL-encoded (as in `{memfs}`), and the base64 `user:password` of a basic-auth
 * header (ffmpeg URL-decodes the user info before encoding it, so both spellings are listed).
 * Empty when memfs auth is off.
 */
export function memfsSecrets(auth: { enable: boolean; username: string; password: string }): string[] {
  if (!auth.enable || auth.password === '') return [];
  const user = encodeURIComponent(auth.username);
  const password = encodeURIComponent(auth.password);
  return [
    auth.password,
    password,
    base64(`${auth.username}:${auth.password}`),
    base64(`${user}:${password}`),
  ];
}

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/**
 * A process's mask: `base` plus the secrets of its runs' credentials: the memfs one (in every
 * form `memfsSecrets` lists) and the ingest tokens of `{rtmp}` and `{srt}`. Those of the run
 * before the latest stay masked too: a restart starts the next run at once, while the last lines
 * of the one before may still be on their way.
 */
export class RunCredentialMask {
  private latest: readonly string[] = [];
  private current: CredentialMask;

  constructor(private readonly base: CredentialMask) {
    this.current = base;
  }

  readonly mask: CredentialMask = (text) => this.current(text);

  /** The secrets of the run that starts now (`RunCredentials.secrets`). */
  replace(secrets: readonly string[]): void {
    const before = this.latest;
    this.latest = secrets;
    const literals = literalMask([...this.latest, ...before]);
    this.current = literals === undefined ? this.base : (text) => this.base(literals(text));
  }
}
