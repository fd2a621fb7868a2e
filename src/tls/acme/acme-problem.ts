import type { IncomingHttpHeaders } from 'node:http';

/** An error document of the ACME server (RFC 8555 §6.7, RFC 7807), or a failed step of ours. */
export class AcmeProblem extends Error {
  constructor(
    /** `urn:ietf:params:acme:error:…`, or `streamcore:…` for what the client itself decided. */
    readonly type: string,
    readonly detail: string,
    /** The host name the problem concerns, where one does. */
    readonly hostName: string | undefined,
    /** The server's Retry-After, ms from now (rate limits, RFC 8555 §6.6). */
    readonly retryAfterMs: number | undefined,
  ) {
    super(detail);
  }

  /** The problem type without its URN prefix (`rateLimited`, `connection`, `unauthorized`, …). */
  get kind(): string {
    return this.type.replace(/^urn:ietf:params:acme:error:/, '');
  }
}

/** Reads an error answer; `fallback` when its body is not a problem document. */
export function problemOf(
  status: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  now: number,
  fallback: string,
): AcmeProblem {
  let type = 'streamcore:http';
  let detail = `${fallback}: HTTP ${status}`;
  let name: string | undefined;
  try {
    const document = JSON.parse(body.toString('utf8')) as {
      type?: unknown;
      detail?: unknown;
      subproblems?: { identifier?: { value?: unknown } }[];
    };
    if (typeof document.type === 'string') type = document.type;
    if (typeof document.detail === 'string') detail = document.detail;
    // A refused order names the identifier it refused in a subproblem (RFC 8555 §6.7.1).
    const refused = Array.isArray(document.subproblems)
      ? document.subproblems[0]?.identifier?.value
      : undefined;
    if (typeof refused === 'string') name = refused;
  } catch {
    // Not JSON: the status says enough.
  }
  const retryAfter = headers['retry-after'];
  return new AcmeProblem(
    type,
    detail,
    name,
    retryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined, now),
  );
}

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3), as ms from `now`. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
