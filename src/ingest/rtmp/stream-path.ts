/** Where a publish or play request points, with the token it carried. */
export interface StreamPath {
  /** `/<app>/<name>` without query and without a path token, e.g. `/live/abc`. */
  path: string;
  /** The `token` query parameter, else the last path element when `withPathToken`; '' when none. */
  token: string;
}

/** Longest path we accept, characters; longer ones are refused as bad names. */
const MAX_PATH_LENGTH = 1024;

/**
 * Joins the `app` of `connect` and the stream name of `publish`/`play` into a path, and takes the
 * token out of it the way datarhei Core does (`rtmp/rtmp.go` getToken): a `?token=` query (on the
 * name, or on the app, whichever an encoder put it on) wins; otherwise, when a token is configured,
 * the last path element is the token (`rtmp://host/live/abc/<token>`). Undefined for names that
 * are empty, too long, or carry control characters or `..` segments.
 */
export function parseStreamPath(app: string, name: string, withPathToken: boolean): StreamPath | undefined {
  const [appPath = '', appQuery = ''] = splitOnce(app, '?');
  const [namePath = '', nameQuery = ''] = splitOnce(name, '?');
  const segments = `${appPath}/${namePath}`.split('/').filter((segment) => segment !== '');
  const queryToken =
    new URLSearchParams(nameQuery).get('token') ?? new URLSearchParams(appQuery).get('token') ?? '';
  let token = queryToken;
  if (token === '' && withPathToken) token = segments.pop() ?? '';
  if (segments.length === 0) return undefined;
  if (segments.some((segment) => segment === '.' || segment === '..')) return undefined;
  const path = '/' + segments.join('/');
  // eslint-disable-next-line no-control-regex
  if (path.length > MAX_PATH_LENGTH || /[\u0000-\u001f\u007f]/.test(path)) return undefined;
  return { path, token };
}

function splitOnce(text: string, separator: string): [string, string] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, ''] : [text.slice(0, index), text.slice(index + 1)];
}

/** Whether `path` lies under the configured app (`rtmp.app`, `/` = everything). */
export function isUnderApp(path: string, app: string): boolean {
  const base = app.replace(/\/+$/, '');
  return base === '' || path.startsWith(base + '/');
}
