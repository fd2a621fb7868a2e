import { Type, type Static } from 'typebox';
import { BEARER, errors, GUARDED, JSON_BODY, type RouteDoc } from '../http/index.js';
import { TlsStatus } from '../tls/index.js';

/** The v16 layout, described by the keys clients rely on; the rest is docs/compatibility.md's. */
const V16Layout = Type.Object(
  {
    created_at: Type.String(),
    version: Type.Literal(3),
    id: Type.String(),
    name: Type.String(),
    address: Type.String(),
    host: Type.Object({ name: Type.Array(Type.String()), auto: Type.Boolean() }),
    api: Type.Object({}, { additionalProperties: true }),
    storage: Type.Object({}, { additionalProperties: true }),
    rtmp: Type.Object({}, { additionalProperties: true }),
    srt: Type.Object({}, { additionalProperties: true }),
    tls: Type.Object({}, { additionalProperties: true }),
  },
  {
    additionalProperties: true,
    description:
      'The v16 layout; `api.auth.jwt.secret` and `api.auth.password` are always "" (a PUT of "" keeps them)',
  },
);

/** The answer of `GET /api/v3/config` (the reference's `api.Config`). */
const ConfigAnswer = Type.Object({
  created_at: Type.String({ description: 'When the stored configuration was written (RFC 3339)' }),
  loaded_at: Type.String({ description: 'When the running configuration was put into effect' }),
  updated_at: Type.String({ description: 'When the stored configuration was last changed' }),
  config: V16Layout,
  overrides: Type.Array(Type.String(), { description: 'Keys set by environment variables' }),
  tls: TlsStatus,
});
/**
 * The layout itself is built from the field table (v16-layout.ts), key by key, so the code holds it
 * as a plain record; the schema names the keys a client relies on.
 */
export type ConfigAnswer = Omit<Static<typeof ConfigAnswer>, 'config' | 'tls'> & {
  config: Record<string, unknown>;
};

/** `"OK"`, as the reference answers a stored or reloaded configuration. */
const Ok = Type.Literal('OK');

const ConfigBody = Type.Unknown({
  description:
    'The v16 config layout, `version: 3`; missing keys keep their value. Refused (400, naming the key): an integer out of its bounds, a listener address that cannot be bound now, and the API without authentication beyond loopback',
});

function configRoute(summary: string, doc: Pick<RouteDoc, 'body' | 'responses'>): RouteDoc {
  return { summary, tags: ['config'], security: BEARER, ...doc };
}

/** The configuration routes (`/api/v3/config`), described for the API document. */
export const CONFIG_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/config': configRoute('The stored configuration in the datarhei Core v16 layout', {
    responses: { 200: ConfigAnswer, ...errors(...GUARDED, 429) },
  }),
  'PUT /api/v3/config': configRoute(
    'Store a complete or partial configuration (v16 layout); applied by a reload',
    { body: ConfigBody, responses: { 200: Ok, ...errors(...GUARDED, 429, ...JSON_BODY) } },
  ),
  'GET /api/v3/config/reload': configRoute(
    'Put the stored configuration into effect without stopping processes',
    { responses: { 200: Ok, ...errors(...GUARDED, 429, 400) } },
  ),
};
