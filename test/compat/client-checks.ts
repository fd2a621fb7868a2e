import assert from 'node:assert/strict';

/**
 * The checks the Restreamer UI and core-client-go apply to answers, written down so the replay
 * tests fail where those clients would: the UI feeds versions to `semver` (which throws on anything
 * but `x.y.z`) and iterates lists without null checks; Go decodes numbers into typed fields.
 */

/** `semver.major()` accepts it, and `satisfies(v, range)` can be evaluated. */
export function assertSemver(value: unknown, what: string): asserts value is string {
  assert.equal(typeof value, 'string', `${what} is a string`);
  assert.match(value as string, /^\d+\.\d+\.\d+$/, `${what} "${String(value)}" is plain semver`);
}

/** The UI's check `satisfies(have, '^5.1.0 || ^6.1.0')` on a plain `x.y.z` (src/version.js). */
export function uiAcceptsFfmpeg(version: string): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return (major === 5 && minor >= 1) || (major === 6 && minor >= 1);
}

/** Walks a JSON value: no `null` anywhere where the schema lists an array (`paths` like `codecs.audio`). */
export function assertArrays(value: unknown, paths: string[]): void {
  for (const path of paths) {
    let node: unknown = value;
    for (const part of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
    assert.ok(Array.isArray(node), `${path} is an array, got ${JSON.stringify(node)}`);
  }
}

/** Every object in `items` has each key with the given `typeof`. */
export function assertItemTypes(items: unknown[], types: Record<string, string>, what: string): void {
  for (const item of items) {
    for (const [key, type] of Object.entries(types)) {
      const actual = Array.isArray((item as Record<string, unknown>)[key])
        ? 'array'
        : typeof (item as Record<string, unknown>)[key];
      assert.equal(actual, type, `${what}.${key} of ${JSON.stringify(item)}`);
    }
  }
}

/**
 * The public `host[:port]` the Restreamer UI puts into the addresses it shows viewers
 * (`_initConfig` in its `src/utils/restreamer.js`): the host it reached the core by, replaced by
 * the first `host.name` when that host is an IP address or `localhost`; the port it reached the
 * core on, left out when it is the scheme's default (HTTPS when the page or `tls.enable` says so).
 */
export function uiPublicHost(coreAddress: string, config: Record<string, unknown>): string {
  const address = new URL(coreAddress);
  const host = config.host as { name: string[] };
  const tls = config.tls as { enable: boolean };
  const isIp =
    address.hostname === 'localhost' ||
    /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/.test(address.hostname) ||
    address.hostname.includes(':');
  const hostname = isIp && host.name.length > 0 ? (host.name[0] as string) : address.hostname;
  const secure = address.protocol === 'https:' || tls.enable;
  const port = address.port === '' ? (secure ? '443' : '80') : address.port;
  return (secure && port !== '443') || (!secure && port !== '80') ? `${hostname}:${port}` : hostname;
}
