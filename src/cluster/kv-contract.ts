import { Type, type Static } from 'typebox';
import { errors, GUARDED, JSON_BODY, type RouteDoc } from '../http/index.js';
import { guarded, OK } from './guarded-route-doc.js';

/**
 * The cluster's key-value store and locks (docs/cluster.md#the-references-cluster-routes): the
 * reference's shapes, its listing routes (`/cluster/db/kv`, `/cluster/db/locks`) and the bodies of
 * its internal `/v1/kv` and `/v1/lock`.
 */

const KeyParams = Type.Object({ key: Type.String() });
const NameParams = Type.Object({ name: Type.String() });

/** The reference's `ClusterKVS`. */
const KeyValues = Type.Record(
  Type.String(),
  Type.Object({ value: Type.String(), updated_at: Type.String({ description: 'RFC 3339' }) }),
  { title: 'ClusterKVS' },
);
export type KeyValuesDto = Static<typeof KeyValues>;

const KeyValue = Type.Object(
  { value: Type.String(), updated_at: Type.String({ description: 'RFC 3339' }) },
  { title: 'ClusterKVSValue' },
);

/** The body of `POST /api/v3/cluster/kv` (the reference's internal `SetKVRequest`). */
export const SetKeyValueBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 256 }),
    value: Type.String({ maxLength: 65536 }),
  },
  { title: 'ClusterSetKV' },
);

/** The reference's `ClusterLock`. */
const Lock = Type.Object(
  { name: Type.String(), valid_until: Type.String({ description: 'RFC 3339' }) },
  { title: 'ClusterLock' },
);
export type LockDto = Static<typeof Lock>;

/** The body of `POST /api/v3/cluster/lock` (the reference's internal `LockRequest`). */
export const LockBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    valid_until: Type.String({ description: 'RFC 3339, at least 1 s and at most 1 day ahead' }),
  },
  { title: 'ClusterLockRequest' },
);

export const KV_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/cluster/db/kv': guarded({
    summary: "The cluster's key-value store",
    responses: { 200: KeyValues, ...errors(...GUARDED, 503) },
  }),
  'GET /api/v3/cluster/db/locks': guarded({
    summary: 'The locks held now',
    responses: { 200: Type.Array(Lock), ...errors(...GUARDED, 503) },
  }),
  'POST /api/v3/cluster/kv': guarded({
    summary: 'Sets a key of the key-value store',
    body: SetKeyValueBody,
    responses: { 200: OK, ...errors(...GUARDED, ...JSON_BODY, 503) },
  }),
  'GET /api/v3/cluster/kv/:key': guarded({
    summary: 'Reads a key of the key-value store',
    params: KeyParams,
    responses: { 200: KeyValue, ...errors(...GUARDED, 404, 503) },
  }),
  'DELETE /api/v3/cluster/kv/:key': guarded({
    summary: 'Deletes a key of the key-value store',
    params: KeyParams,
    responses: { 200: OK, ...errors(...GUARDED, 404, 503) },
  }),
  'POST /api/v3/cluster/lock': guarded({
    summary: 'Takes a lock until `valid_until` (409 while another holds it)',
    body: LockBody,
    responses: { 200: Lock, ...errors(...GUARDED, ...JSON_BODY, 409, 503) },
  }),
  'DELETE /api/v3/cluster/lock/:name': guarded({
    summary: 'Releases a lock',
    params: NameParams,
    responses: { 200: OK, ...errors(...GUARDED, 404, 503) },
  }),
};
