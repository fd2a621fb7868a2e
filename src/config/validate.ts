import { isIP } from 'node:net';
import { accessSettingProblems } from './access-settings.js';
import { s3RouterClashes, s3StorageProblems } from './s3-storages.js';
import { LOG_LEVELS, SANDBOX_MODES, type Config } from './schema.js';

/**
 * Cross-field and value checks after loading (docs/configuration.md#validation); each integer's bounds are checked
 * as it is read (keys.ts). One message per problem.
 */
export function validateConfig(config: Config): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, message: string): void => {
    if (!ok) problems.push(message);
  };

  check(
    parseListenAddress(config.address) !== undefined,
    `address: must be "host:port" or ":port", got "${config.address}"`,
  );
  check(
    (LOG_LEVELS as readonly string[]).includes(config.log.level),
    `log.level: must be one of ${LOG_LEVELS.join(', ')}, got "${config.log.level}"`,
  );
  check(config.db.dir !== '', 'db.dir: must not be empty');
  for (const name of config.host.name) {
    check(isHostName(name), `host.name: "${name}" is not a host name or IP address (no scheme, no port)`);
  }
  for (const cidr of config.api.trusted_proxies) {
    check(isCidr(cidr), `api.trusted_proxies: "${cidr}" is not an IP address or CIDR`);
  }

  const timeouts = config.api.timeouts;
  // Node refuses a header time-out longer than the request time-out.
  check(
    timeouts.request_sec === 0 || timeouts.request_sec >= timeouts.header_sec,
    'api.timeouts.request_sec: must be 0 or at least api.timeouts.header_sec',
  );
  for (const cidr of config.api.connections.exempt) {
    check(isCidr(cidr), `api.connections.exempt: "${cidr}" is not an IP address or CIDR`);
  }

  const auth = config.api.auth;
  if (auth.enable) {
    check(auth.username !== '', 'api.auth.username: required when api.auth.enable is true');
    check(auth.password !== '', 'api.auth.password: required when api.auth.enable is true');
  }
  check(auth.jwt.secret !== '', 'api.auth.jwt.secret: must not be empty');

  const metrics = config.metrics;
  if (metrics.enable) {
    check(
      metrics.range_sec >= metrics.interval_sec,
      'metrics.range_sec: must be at least metrics.interval_sec',
    );
    check(
      metrics.range_sec / metrics.interval_sec <= 100_000,
      'metrics.range_sec: range_sec / interval_sec must be at most 100000 samples per series',
    );
  }

  check(config.storage.disk.dir !== '', 'storage.disk.dir: must not be empty');
  if (config.storage.memory.auth.enable) {
    check(
      config.storage.memory.auth.username !== '',
      'storage.memory.auth.username: required when storage.memory.auth.enable is true',
    );
  }
  problems.push(...s3StorageProblems(config.storage.s3));
  problems.push(...s3RouterClashes(config.storage.s3, config.router));
  check(config.ffmpeg.binary !== '', 'ffmpeg.binary: must not be empty');
  problems.push(...accessSettingProblems(config.ffmpeg.access));
  check(
    (SANDBOX_MODES as readonly string[]).includes(config.ffmpeg.sandbox),
    `ffmpeg.sandbox: must be one of ${SANDBOX_MODES.map((mode) => `"${mode}"`).join(', ')}, got "${config.ffmpeg.sandbox}"`,
  );

  problems.push(...validateRtmp(config));
  problems.push(...validateTls(config));
  problems.push(...validateSrt(config));

  const sessions = config.sessions;
  for (const cidr of sessions.ip_ignorelist) {
    check(isCidr(cidr), `sessions.ip_ignorelist: "${cidr}" is not an IP address or CIDR`);
  }
  return problems;
}

function validateRtmp(config: Config): string[] {
  const { rtmp, tls } = config;
  const problems: string[] = [];
  if (!rtmp.enable && !rtmp.enable_tls) return problems;
  if (parseListenAddress(rtmp.address) === undefined) {
    problems.push(`rtmp.address: must be "host:port" or ":port", got "${rtmp.address}"`);
  }
  if (!/^\/[^?#\s]*$/.test(rtmp.app))
    problems.push(`rtmp.app: must be an absolute path like "/live", got "${rtmp.app}"`);
  if (!rtmp.enable_tls) return problems;
  // As in the reference (config/config.go): RTMPS runs beside RTMP, on its own address.
  if (!rtmp.enable) problems.push('rtmp.enable: must be true when rtmp.enable_tls is true');
  if (parseListenAddress(rtmp.address_tls) === undefined) {
    problems.push(`rtmp.address_tls: must be "host:port" or ":port", got "${rtmp.address_tls}"`);
  } else if (rtmp.address_tls === rtmp.address && parseListenAddress(rtmp.address)?.port !== 0) {
    problems.push('rtmp.address_tls: must differ from rtmp.address');
  }
  // The certificate HTTPS serves (automatic or own), or own files for RTMPS alone.
  if (!(tls.enable && tls.auto)) {
    if (tls.cert_file === '')
      problems.push('tls.cert_file: required when rtmp.enable_tls is true (or set tls.auto)');
    if (tls.key_file === '')
      problems.push('tls.key_file: required when rtmp.enable_tls is true (or set tls.auto)');
  }
  return problems;
}

function validateTls(config: Config): string[] {
  const { tls } = config;
  const problems: string[] = [];
  if (tls.auto && !tls.enable) problems.push('tls.enable: must be true when tls.auto is true');
  if (!tls.enable) return problems;
  const listen = parseListenAddress(tls.address);
  if (listen === undefined) {
    problems.push(`tls.address: must be "host:port" or ":port", got "${tls.address}"`);
  } else if (tls.address === config.address && listen.port !== 0) {
    problems.push('tls.address: must differ from address');
  }
  if (tls.auto) {
    if (!/^https?:\/\/[^\s/]+/.test(tls.acme.directory_url)) {
      problems.push(`tls.acme.directory_url: must be an http(s) URL, got "${tls.acme.directory_url}"`);
    }
    return problems;
  }
  if (tls.cert_file === '')
    problems.push('tls.cert_file: required when tls.enable is true and tls.auto is false');
  if (tls.key_file === '')
    problems.push('tls.key_file: required when tls.enable is true and tls.auto is false');
  return problems;
}

function validateSrt(config: Config): string[] {
  const { srt } = config;
  const problems: string[] = [];
  if (!srt.enable) return problems;
  if (parseListenAddress(srt.address) === undefined) {
    problems.push(`srt.address: must be "host:port" or ":port", got "${srt.address}"`);
  }
  // libsrt's limits for a passphrase.
  if (srt.passphrase !== '' && (srt.passphrase.length < 10 || srt.passphrase.length > 79)) {
    problems.push(`srt.passphrase: must be empty or 10 to 79 characters, got ${srt.passphrase.length}`);
  }
  // ffmpeg reads srt:// options raw, split at '&': a value holding one cannot be passed on.
  for (const key of ['passphrase', 'token'] as const) {
    if (/[&#\s]/.test(srt[key])) problems.push(`srt.${key}: must not contain "&", "#" or white space`);
  }
  return problems;
}

/** Splits `host:port` / `:port` / `[v6]:port`; undefined when malformed. An empty host means all interfaces. */
export function parseListenAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(address);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65_535) return undefined;
  return { host: match[1] ?? match[2] ?? '', port };
}

/** A DNS name (RFC 1123 labels) or an IP address, as clients put it into URLs. */
function isHostName(value: string): boolean {
  if (isIP(value) !== 0) return true;
  if (value.length === 0 || value.length > 253) return false;
  return value.split('.').every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label));
}

/** Accepts `a.b.c.d`, `a.b.c.d/n`, and the IPv6 equivalents. */
export function isCidr(value: string): boolean {
  const [address = '', prefix, extra] = value.split('/');
  if (extra !== undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
