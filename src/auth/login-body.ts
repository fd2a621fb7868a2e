/** What the login scope's JSON parser yields for a body that is not valid JSON. */
export class MalformedJsonBody {
  constructor(readonly reason: string) {}
}

/** A usable username/password pair, or the reasons why the body holds none. */
export type LoginForm = { username: string; password: string } | { problems: string[] };

/**
 * Reads the body of `POST /api/login` (docs/auth.md#login-methods): an object with non-empty string fields
 * `username` and `password`; unknown fields are ignored. Anything else yields the problems, which
 * follow "Missing authorization credentials" in a 400, unless an identity-provider token is sent.
 */
export function readLoginForm(body: unknown): LoginForm {
  if (body === undefined) return { problems: ['body: empty'] };
  if (body instanceof MalformedJsonBody) return { problems: [`body: invalid JSON (${body.reason})`] };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { problems: ['body: must be a JSON object with username and password'] };
  }
  const record = body as Record<string, unknown>;
  const problems: string[] = [];
  const username = readField(record, 'username', problems);
  const password = readField(record, 'password', problems);
  if (username === undefined || password === undefined) return { problems };
  return { username, password };
}

function readField(record: Record<string, unknown>, name: string, problems: string[]): string | undefined {
  const value = record[name];
  if (value === undefined || value === null) problems.push(`${name}: missing`);
  else if (typeof value !== 'string') problems.push(`${name}: must be a string`);
  else if (value === '') problems.push(`${name}: empty`);
  else return value;
  return undefined;
}
