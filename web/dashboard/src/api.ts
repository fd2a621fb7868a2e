/**
 * The dashboard's client of the streamcore API: login, token refresh and JSON requests.
 *
 * Tokens are held in this object's memory only, never in sessionStorage, localStorage or a cookie:
 * any page of the same origin in the same tab could read those (a file a publisher uploaded to the
 * server's filesystems, opened where the dashboard was; issue 24 item 5). A reload of the page
 * therefore asks to log in again. The access token is refreshed ahead of its expiry from the `exi`
 * claim (docs/auth.md#tokens).
 */

/** An answer outside 2xx, with the server's envelope (`{code, message, details}`) when it sent one. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: readonly string[],
  ) {
    super(message);
  }

  /** What a person should read: the precise detail when there is one, else the message. */
  get explanation(): string {
    return this.details.length > 0 ? this.details.join('; ') : this.message;
  }
}

/** The session ended (refresh refused or expired): the login form takes over. */
export class SessionExpiredError extends ApiRequestError {}

interface TokenPair {
  access: string;
  refresh: string;
}

/** Where earlier versions mirrored the tokens; removed at start so none is left readable there. */
const LEGACY_STORAGE_KEY = 'streamcore.dashboard.tokens';
/** Refresh this share of the access lifetime in; the rest is margin for a slow network. */
const REFRESH_AT_SHARE = 0.8;

export class ApiClient {
  private tokens: TokenPair | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private refreshing: Promise<void> | undefined;
  /** Called once when the session cannot be kept (the shell shows the login form). */
  onSessionEnd: () => void = () => {};

  constructor() {
    try {
      sessionStorage.removeItem(LEGACY_STORAGE_KEY);
    } catch {
      // Storage is off in this browser (its access throws): then nothing was left there either.
    }
  }

  get hasSession(): boolean {
    return this.tokens !== undefined;
  }

  /** Which login methods the server offers (`[]` with auth off), from `GET /api`. */
  async loginMethods(): Promise<string[]> {
    const about = await this.json<{ auths?: unknown }>('GET', '/api', undefined, false);
    return Array.isArray(about.auths) ? about.auths.filter((a): a is string => typeof a === 'string') : [];
  }

  async login(username: string, password: string): Promise<void> {
    const pair = await this.json<{ access_token: string; refresh_token: string }>(
      'POST',
      '/api/login',
      { username, password },
      false,
    );
    this.setTokens({ access: pair.access_token, refresh: pair.refresh_token });
  }

  logout(): void {
    this.clearTokens();
  }

  /** A JSON request under the API; 401 after a refresh attempt ends the session. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    try {
      return await this.json<T>(method, path, body, true);
    } catch (error) {
      if (!(error instanceof ApiRequestError) || error.status !== 401 || this.tokens === undefined)
        throw error;
      await this.refresh();
      return this.json<T>(method, path, body, true);
    }
  }

  private async json<T>(method: string, path: string, body: unknown, withToken: boolean): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (withToken && this.tokens !== undefined) headers.authorization = `Bearer ${this.tokens.access}`;
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw errorOf(response.status, text);
    return JSON.parse(text) as T;
  }

  /** Single-flight: concurrent 401s share one refresh. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const tokens = this.tokens;
      if (tokens === undefined) throw new SessionExpiredError(401, 'Not logged in', []);
      const response = await fetch('/api/login/refresh', {
        headers: { authorization: `Bearer ${tokens.refresh}`, accept: 'application/json' },
      }).catch(() => undefined);
      if (response === undefined) return; // network trouble: keep the session, the next poll retries
      const text = await response.text();
      if (!response.ok) {
        this.clearTokens();
        this.onSessionEnd();
        const cause = errorOf(response.status, text);
        throw new SessionExpiredError(
          cause.status,
          'Your session has ended, please log in again',
          cause.details,
        );
      }
      const answer = JSON.parse(text) as { access_token: string };
      this.setTokens({ access: answer.access_token, refresh: tokens.refresh });
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private setTokens(pair: TokenPair): void {
    this.tokens = pair;
    clearTimeout(this.refreshTimer);
    const lifetimeSec = claimNumber(pair.access, 'exi');
    const expiresSec = claimNumber(pair.access, 'exp');
    if (lifetimeSec === undefined || expiresSec === undefined) return;
    const untilExpiryMs = expiresSec * 1000 - Date.now();
    const delayMs = Math.max(
      0,
      Math.min(untilExpiryMs - lifetimeSec * 1000 * (1 - REFRESH_AT_SHARE), 2 ** 31 - 1),
    );
    this.refreshTimer = setTimeout(() => {
      this.refresh().catch(() => {});
    }, delayMs);
  }

  private clearTokens(): void {
    this.tokens = undefined;
    clearTimeout(this.refreshTimer);
  }
}

function errorOf(status: number, text: string): ApiRequestError {
  try {
    const envelope = JSON.parse(text) as { message?: unknown; details?: unknown };
    const message = typeof envelope.message === 'string' ? envelope.message : `HTTP ${status}`;
    const details = Array.isArray(envelope.details)
      ? envelope.details.filter((d): d is string => typeof d === 'string')
      : [];
    return new ApiRequestError(status, message, details);
  } catch {
    return new ApiRequestError(status, `HTTP ${status}`, []);
  }
}

/** A numeric claim of a JWT's payload, read without verifying (the server verifies). */
function claimNumber(token: string, claim: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const value = (JSON.parse(json) as Record<string, unknown>)[claim];
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
