import type { Socket } from 'node:net';
import { loginThrottleKeys, readLoginForm } from '../auth/index.js';
import type { MetricReplica } from '../monitor/index.js';
import type { EncoderConnections } from '../process/index.js';
import type { ScannedRequest } from './request-head.js';
import type { WorkerRoutes } from './worker-routes.js';

/** What a worker knows when it decides: its routes, its replica, and what the main process told it. */
export interface WorkerState {
  routes: WorkerRoutes | undefined;
  replica: MetricReplica | undefined;
  /** Throttle keys with recent failed logins (the main process's LoginThrottle.failingKeys). */
  throttled: { addresses: ReadonlySet<string>; usernames: ReadonlySet<string> };
  encoders: EncoderConnections;
  /** Whether any encoder runs now (the main process's list). */
  encodersRunning: () => boolean;
}

const METRICS_PATHS = new Set(['/api/v3/metrics', '/api/v3/metrics/']);
const TIMERANGE_KEY = Buffer.from('timerange_sec');
const BACKSLASH = 0x5c;

/**
 * Whether a worker answers `request` itself (docs/performance.md#the-api-on-every-core): only what
 * it answers exactly as the main process would.
 * - `POST /api/login` with the configured username and password, from an address and for a
 *   username without a recent failure: the main process would issue the tokens and change nothing
 *   else. A wrong password, a throttled client, an identity-provider login: the main process's
 *   (its throttle, its failure delay, its log line).
 * - `GET /api/login/refresh`: a signature check.
 * - `GET` and `POST /api/v3/metrics` over the replica, unless the range reaches the history tiers.
 * - Nothing from a connection one of the server's encoders opened (the encoder guard is the main's).
 */
export function workerAnswers(
  state: WorkerState,
  request: ScannedRequest,
  body: Buffer,
  socket: Socket,
): boolean | Promise<boolean> {
  const routes = state.routes;
  if (routes === undefined || !answerable({ state, routes, request, body, socket })) return false;
  // Without a running encoder no connection can be one's: no lookup, no promise per request.
  if (!state.encodersRunning()) return true;
  const fromEncoder = state.encoders.fromEncoder(socket);
  return typeof fromEncoder === 'boolean' ? !fromEncoder : fromEncoder.then((from) => !from);
}

/** One request to decide on, and what the worker knows. */
interface Asked {
  state: WorkerState;
  routes: WorkerRoutes;
  request: ScannedRequest;
  body: Buffer;
  socket: Socket;
}

function answerable(asked: Asked): boolean {
  const { state, routes, request, body } = asked;
  const { method, target } = request;
  if (method === 'POST' && target === '/api/login') return answersLogin(asked);
  if (method === 'GET' && target === '/api/login/refresh') return routes.passwords !== undefined;
  if (!METRICS_PATHS.has(target)) return false;
  if (method === 'GET') return true;
  if (method !== 'POST') return false;
  const replica = state.replica;
  if (replica === undefined) return false;
  if (!replica.historyInMain) return true;
  // A body that spells no `timerange_sec` asks for none: JSON can only hide a key's letters
  // behind a backslash escape. Most queries (latest values) so skip a second parse here.
  if (!body.includes(TIMERANGE_KEY) && !body.includes(BACKSLASH)) return true;
  try {
    return !replica.needsHistory(
      (JSON.parse(body.toString('utf8')) as { timerange_sec?: unknown }).timerange_sec,
    );
  } catch {
    // Malformed JSON: the worker's 400 is the main's.
    return true;
  }
}

function answersLogin({ state, routes, request, body, socket }: Asked): boolean {
  const passwords = routes.passwords;
  const address = socket.remoteAddress;
  if (passwords === undefined || address === undefined) return false;
  // The client's address may come from X-Forwarded-For: the main process reads it with the throttle.
  if (routes.config.api.trusted_proxies.length > 0) return false;
  if ((request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() !== 'application/json')
    return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const form = readLoginForm(parsed);
  if (!('username' in form)) return false;
  const keys = loginThrottleKeys(address, form.username);
  if (state.throttled.addresses.has(keys.address) || state.throttled.usernames.has(keys.username))
    return false;
  return passwords.matches(form.username, form.password);
}
