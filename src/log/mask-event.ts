import type { LogEvent } from './log-event.js';

/** Field names whose values are secrets wherever they appear (compared lower-case). */
const SECRET_KEY = /pass(word|phrase)?|secret|token|authorization|cookie|api_?key|credential/i;
/** The user info of a URL (`rtmp://user:pw@host`), in any string. */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s"]+@/gi;
/** Secrets shorter than this are not replaced where they stand alone (they would mask noise). */
const MIN_LITERAL_LENGTH = 4;

/**
 * Hides secrets in a log event before it leaves the server: values of secret-named fields,
 * URL user info, and every literal occurrence of the server's own `secrets` (passwords, the JWT
 * secret, tokens of the configuration in force), each replaced by `***`.
 */
export function maskEvent(event: LogEvent, secrets: readonly string[]): LogEvent {
  const literal = secrets
    .filter((secret) => secret.length >= MIN_LITERAL_LENGTH)
    .sort((a, b) => b.length - a.length);
  const maskText = (text: string): string => {
    let masked = text;
    for (const secret of literal) if (masked.includes(secret)) masked = masked.replaceAll(secret, '***');
    // The expression backtracks over long runs of letters: only text that holds a URL is searched.
    return masked.includes('://') ? masked.replace(URL_USERINFO, '$1***@') : masked;
  };
  const maskValue = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return maskText(value);
    if (typeof value !== 'object' || value === null || depth > 8) return value;
    if (Array.isArray(value)) return value.map((item) => maskValue(item, depth + 1));
    const result: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      result[key] =
        SECRET_KEY.test(key) && inner !== '' && inner !== null ? '***' : maskValue(inner, depth + 1);
    }
    return result;
  };
  return {
    ...event,
    message: maskText(event.message),
    data: maskValue(event.data, 0) as Record<string, unknown>,
  };
}
