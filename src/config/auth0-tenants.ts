import type { Auth0Tenant } from './declare-key.js';

/**
 * Parses `CORE_API_AUTH_AUTH0_TENANTS` (docs/auth.md#identity-provider-tenants): a comma-separated list whose items are either
 * base64 of a tenant's JSON, or `auth0://[clientid@]domain?aud=<audience>&user=<u1>&user=<u2>`.
 * Returns the tenants, or the problem with the item's position (1-based).
 */
export function parseTenantsEnv(value: string): { tenants: Auth0Tenant[] } | { problem: string } {
  const tenants: Auth0Tenant[] = [];
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const [index, item] of items.entries()) {
    const parsed = item.startsWith('auth0://') ? parseTenantUrl(item) : parseTenantBase64(item);
    if (typeof parsed === 'string') return { problem: `item ${index + 1}: ${parsed}` };
    tenants.push(parsed);
  }
  return { tenants };
}

function parseTenantUrl(item: string): Auth0Tenant | string {
  let url: URL;
  try {
    url = new URL(item);
  } catch {
    return 'not a valid auth0:// URL';
  }
  const clientid = decodePercent(url.username);
  if (clientid === undefined) return `client id "${url.username}" is not valid percent-encoding`;
  const tenant: Auth0Tenant = {
    domain: url.host,
    audience: url.searchParams.get('aud') ?? '',
    clientid,
    users: url.searchParams.getAll('user'),
  };
  return checkTenant(tenant);
}

/** `decodeURIComponent`, or undefined where it would throw (a `%` not followed by UTF-8 as hex). */
function decodePercent(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function parseTenantBase64(item: string): Auth0Tenant | string {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(item, 'base64').toString('utf8'));
  } catch {
    return 'neither an auth0:// URL nor base64 of a JSON object';
  }
  return validateTenant(json);
}

/** Checks one tenant object as read from a file or decoded from the env; returns it or a problem. */
export function validateTenant(json: unknown): Auth0Tenant | string {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return 'a tenant must be a JSON object';
  const record = json as Record<string, unknown>;
  for (const field of ['domain', 'audience', 'clientid'] as const) {
    if (record[field] !== undefined && typeof record[field] !== 'string') return `${field} must be a string`;
  }
  for (const field of ['issuer', 'jwks_url'] as const) {
    if (record[field] !== undefined && typeof record[field] !== 'string') return `${field} must be a string`;
  }
  const users = record.users ?? [];
  if (!Array.isArray(users) || users.some((user) => typeof user !== 'string')) {
    return 'users must be an array of strings';
  }
  const tenant: Auth0Tenant = {
    domain: (record.domain as string | undefined) ?? '',
    audience: (record.audience as string | undefined) ?? '',
    clientid: (record.clientid as string | undefined) ?? '',
    users: users as string[],
  };
  if (typeof record.issuer === 'string' && record.issuer !== '') tenant.issuer = record.issuer;
  if (typeof record.jwks_url === 'string' && record.jwks_url !== '') tenant.jwks_url = record.jwks_url;
  return checkTenant(tenant);
}

function checkTenant(tenant: Auth0Tenant): Auth0Tenant | string {
  if (tenant.domain === '') return 'domain must not be empty';
  if (!isHost(tenant.domain)) return `domain "${tenant.domain}" is not a host name (with an optional port)`;
  if (tenant.audience === '') return 'audience must not be empty';
  if (tenant.jwks_url !== undefined && !isHttpUrl(tenant.jwks_url)) {
    return `jwks_url "${tenant.jwks_url}" is not an http(s) URL`;
  }
  return tenant;
}

/** `example.eu.auth0.com`, `idp.local:8443`, `[::1]:8080`: what may stand between `https://` and the path. */
function isHost(domain: string): boolean {
  try {
    return new URL(`https://${domain}/`).host === domain.toLowerCase();
  } catch {
    return false;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
