import { posix } from 'node:path';
import type { Config } from '../config/index.js';

/** Where `router.ui_path` is served (the reference's fixed mount). */
export const UI_PREFIX = '/ui';

/**
 * Paths streamcore serves itself. A route there would never be reached (the server's own route
 * wins), or would take over the API; refused like a blocked prefix, whatever `blocked_prefixes` says.
 */
const SERVER_PATHS = ['/api', '/memfs', '/metrics', '/dashboard', '/ping'];

/** A directory served under `prefix/`: the UI build, or a `/path/*` route. */
export interface DirectoryRoute {
  /** The URL prefix without its trailing slash, e.g. `/ui`. */
  readonly prefix: string;
  /** Absolute directory. */
  readonly root: string;
  /** The UI build (trusted: served without the user-file sandbox). */
  readonly ui: boolean;
  /** The config key that named it, for messages. */
  readonly key: string;
}

/** The routes of `router` (datarhei Core's `http/router`), checked. */
export interface RouteTable {
  /** Exact path → path to redirect to (301). */
  readonly redirects: ReadonlyMap<string, string>;
  /** Longest prefix first. */
  readonly directories: readonly DirectoryRoute[];
}

export type RouteMatch =
  | { kind: 'redirect'; location: string }
  | { kind: 'directory'; route: DirectoryRoute; rest: string }
  | undefined;

/**
 * Reads `router` as the reference does (tag v16.14.0, `http/router/router.go`): `ui_path` is served
 * at `/ui/` and `/ui` joins the blocked prefixes; a route ending in `/*` serves a directory under
 * its prefix; any other route redirects (301) to its target. A route whose key starts with a
 * blocked prefix is refused (a plain string prefix test, as the reference's: `/api` blocks `/apis`).
 * Stricter than the reference, which skips a target without a leading `/` and lets a route shadow
 * the server's own paths: both are refused here, naming the route. Directories are not looked at.
 */
export function buildRouteTable(router: Config['router']): { table: RouteTable; problems: string[] } {
  const problems: string[] = [];
  const blocked = [...router.blocked_prefixes];
  const directories: DirectoryRoute[] = [];
  if (router.ui_path !== '') {
    blocked.push(UI_PREFIX);
    directories.push({ prefix: UI_PREFIX, root: router.ui_path, ui: true, key: 'router.ui_path' });
  }
  const redirects = new Map<string, string>();
  for (const [route, target] of Object.entries(router.routes)) {
    const problem = routeProblem(route, blocked);
    if (problem !== undefined) {
      problems.push(`router.routes: "${route}" ${problem}`);
      continue;
    }
    if (route.endsWith('/*')) {
      if (target === '') problems.push(`router.routes: "${route}" names no directory`);
      else
        directories.push({
          prefix: route.slice(0, -2),
          root: target,
          ui: false,
          key: `router.routes "${route}"`,
        });
      continue;
    }
    const location = redirectTarget(target);
    if (location === undefined) {
      problems.push(`router.routes: "${route}" must redirect to a path starting with "/", got "${target}"`);
    } else redirects.set(route, location);
  }
  directories.sort((a, b) => b.prefix.length - a.prefix.length);
  return { table: { redirects, directories }, problems };
}

function routeProblem(route: string, blocked: readonly string[]): string | undefined {
  if (!route.startsWith('/')) return 'must start with "/"';
  if (/[\s\\?#\0]/.test(route)) return 'must not contain white space, "\\", "?" or "#"';
  const prefix = route.endsWith('/*') ? route.slice(0, -2) : route;
  if (prefix === '') return 'would take over every path; name a prefix (`/path/*`)';
  if (prefix.includes('*')) return 'may hold "*" only as its last segment (`/path/*`)';
  const blockedBy = blocked.find((item) => item !== '' && route.startsWith(item));
  if (blockedBy !== undefined)
    return `starts with the blocked prefix "${blockedBy}" (router.blocked_prefixes)`;
  const own = SERVER_PATHS.find((path) => prefix === path || prefix.startsWith(`${path}/`));
  if (own !== undefined) return `lies under "${own}", which streamcore serves itself`;
  return undefined;
}

/**
 * The cleaned target of a redirect (`//host` becomes `/host`), or undefined when it is not a plain
 * absolute path: browsers read a backslash as `/`, which could send a viewer to another host.
 */
function redirectTarget(target: string): string | undefined {
  if (!target.startsWith('/') || /[\s\\\0]/.test(target)) return undefined;
  return posix.normalize(target);
}

/**
 * What the table does with a request path (no query, not decoded): a redirect, a file below a
 * directory's prefix (`rest` starts with `/`), or nothing. The prefix itself redirects to the
 * prefix with a slash, as the reference does.
 */
export function matchRoute(table: RouteTable, urlPath: string): RouteMatch {
  const location = table.redirects.get(urlPath);
  if (location !== undefined) return { kind: 'redirect', location };
  for (const route of table.directories) {
    if (urlPath === route.prefix) return { kind: 'redirect', location: `${route.prefix}/` };
    if (urlPath.startsWith(`${route.prefix}/`)) {
      return { kind: 'directory', route, rest: urlPath.slice(route.prefix.length) };
    }
  }
  return undefined;
}
