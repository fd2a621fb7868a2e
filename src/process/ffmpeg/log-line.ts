/**
 * Prefixes ffmpeg puts in front of a log line: the level (`[info] `, with `-loglevel level+...`)
 * and the component (`[libx264 @ 0x55d0c0a1b2c0] `), in either order.
 */
const PREFIX = /^(?:\[[a-z]+\] |\[[^\]\s]+ @ 0x[0-9a-f]+\] )+/;

/** The line without its level and component prefixes. */
export function stripLogPrefixes(line: string): string {
  const match = PREFIX.exec(line);
  return match === null ? line : line.slice(match[0].length);
}

/**
 * Hides credentials in a text shown by the API or used as a metric label (SPEC §7.1): the user
 * info of URLs (`rtmp://user:secret@host` → `rtmp://***:***@host`) and the values of query
 * parameters that usually carry secrets (`?passphrase=…`, `&password=…`, `&token=…`).
 */
export function maskCredentials(text: string): string {
  if (!text.includes('@') && !text.includes('=')) return text;
  return text
    .replace(USER_INFO, (_match, scheme: string, info: string) =>
      info.includes(':') ? `${scheme}***:***@` : `${scheme}***@`,
    )
    .replace(SECRET_PARAMETER, (_match, lead: string, name: string) => `${lead}${name}=***`);
}

const USER_INFO = /([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s'"]+)@/g;
const SECRET_PARAMETER = /([?&])(passphrase|password|passwd|pass|pwd|token|secret)=[^&\s'"]*/gi;
