import { Type, type Static } from 'typebox';
import { errors, opaque, PUBLIC, type RouteDoc } from '../http/index.js';

/**
 * What the server's HTTPS is doing, answered as `tls` beside the configuration by
 * `GET /api/v3/config` (docs/tls.md, "Seeing what happens"): a script or the UI reads `state` to
 * know whether HTTPS serves, and `error` for why not (or why a renewal failed).
 */
export const TlsStatus = Type.Object(
  {
    state: Type.Union([Type.Literal('off'), Type.Literal('pending'), Type.Literal('serving')], {
      description:
        '`off`: neither HTTPS (tls.enable) nor RTMPS (rtmp.enable_tls) is on; `pending`: no certificate for the configured names yet (handshakes fail, or get the one served before a reload); `serving`: they serve the certificate for `names`',
    }),
    source: Type.Union([Type.Literal('none'), Type.Literal('file'), Type.Literal('acme')], {
      description: 'Where the served certificate comes from: tls.cert_file/key_file, or ACME (tls.auto)',
    }),
    names: Type.Array(Type.String(), { description: "The served certificate's names" }),
    not_after: Type.Union([Type.String(), Type.Null()], { description: 'Its expiry (RFC 3339)' }),
    renew_at: Type.Union([Type.String(), Type.Null()], {
      description: 'When an automatic certificate is renewed (two thirds of its lifetime)',
    }),
    error: Type.Union(
      [
        Type.Object({
          name: Type.Union([Type.String(), Type.Null()], { description: 'The host name concerned, if one' }),
          reason: Type.String({ description: 'What failed, as the log line says it' }),
          at: Type.String({ description: 'When (RFC 3339)' }),
        }),
        Type.Null(),
      ],
      { description: 'The last failure, cleared by the next success' },
    ),
    next_attempt_at: Type.Union([Type.String(), Type.Null()], {
      description: 'When the server tries to obtain the certificate again after a failure',
    }),
  },
  { $id: 'TlsStatus', title: 'TlsStatus' },
);
export type TlsStatusView = Static<typeof TlsStatus>;

/** The ACME HTTP-01 answer route (RFC 8555 §8.3), on both listeners; the CA asks on the plain one. */
export const TLS_DOCS: Record<string, RouteDoc> = {
  'GET /.well-known/acme-challenge/:token': {
    summary: 'The key authorization of a pending ACME HTTP-01 challenge (tls.auto)',
    tags: ['system'],
    security: PUBLIC,
    produces: ['text/plain'],
    params: Type.Object({ token: Type.String() }),
    responses: { 200: opaque('The key authorization'), ...errors(404) },
  },
};
