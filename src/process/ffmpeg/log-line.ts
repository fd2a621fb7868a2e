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
 * Hides credentials in a text shown by the API or used as a metric label (docs/processes.md#process-config): the user
 * info of URLs (`rtmp://user:secret@host` → `rtmp://***:***@host`), the values of query
 * parameters that usually carry secrets (`?passphrase=…`, `&password=…`, `&token=…`), and the
 * credentials of `Authorization:` and `Proxy-Authorization:` header lines, whatever their scheme
 * (`Authorization: Basic YWRt…` → `Authorization: Basic ***`; ffmpeg logs the request headers of
 * HTTP outputs at `-loglevel debug`).
 */
export function maskCredentials(text: string): string {
  let masked = text;
  if (masked.includes('@') || masked.includes('=')) {
    masked = masked
      .replace(USER_INFO, (_match, scheme: string, info: string) =>
        info.includes(':') ? `${scheme}***:***@` : `${scheme}***@`,
      )
      .replace(SECRET_PARAMETER, (_match, lead: string, name: string) => `${lead}${name}=***`);
  }
  if (AUTHORIZATION_NAME.test(masked)) {
    masked = masked.replace(AUTHORIZATION_HEADER, (_match, name: string, scheme: string | undefined) =>
      scheme === undefined ? `${name}***` : `${name}${scheme} ***`,
    );
  }
  return masked;
}

const USER_INFO = /([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s'"]+)@/g;
const SECRET_PARAMETER = /([?&])(passphrase|password|passwd|pass|pwd|token|secret)=[^&\s'"]*/gi;
const AUTHORIZATION_NAME = /authorization:/i;
/**
 * `Authorization: <scheme> <credentials>` (RFC 9110 §11.6.2) up to the end of the header line; a
 * value without a scheme (`Authorization: token`) is masked whole. Matches `Proxy-Authorization`
 * too, and header blocks inside one text (`-headers "Authorization: …\r\nX: y"`) line by line.
 */
const AUTHORIZATION_HEADER = /\b((?:proxy-)?authorization:[ \t]*)(?:([a-z][a-z0-9-]*)[ \t]+)?[^\r\n]*/gi;
