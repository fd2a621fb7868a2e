import type { FastifyInstance } from 'fastify';
import { ApiError, errors, GUARDED, type RouteDoc } from '../http/index.js';
import { guarded } from './guarded-route-doc.js';

const NO_IAM =
  'streamcore has no IAM: API access is given by the api.auth.* credentials (username and password, JWT secret, Auth0 tenants), the same on every node';

/**
 * The reference's cluster routes that have no counterpart in a streamcore cluster, each with why:
 * answered 501 in the v16 envelope so that a client learns it at once.
 */
export const UNSUPPORTED_ROUTES: readonly {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  why: string;
}[] = [
  { method: 'GET', url: '/cluster/iam/user', why: NO_IAM },
  { method: 'POST', url: '/cluster/iam/user', why: NO_IAM },
  { method: 'GET', url: '/cluster/iam/user/:name', why: NO_IAM },
  { method: 'PUT', url: '/cluster/iam/user/:name', why: NO_IAM },
  { method: 'DELETE', url: '/cluster/iam/user/:name', why: NO_IAM },
  { method: 'PUT', url: '/cluster/iam/user/:name/policy', why: NO_IAM },
  { method: 'GET', url: '/cluster/iam/policies', why: NO_IAM },
  { method: 'PUT', url: '/cluster/iam/reload', why: NO_IAM },
  { method: 'GET', url: '/cluster/db/user', why: NO_IAM },
  { method: 'GET', url: '/cluster/db/user/:name', why: NO_IAM },
  { method: 'GET', url: '/cluster/db/policies', why: NO_IAM },
  {
    method: 'GET',
    url: '/cluster/snapshot',
    why: "the cluster's store is etcd: back it up with `etcdctl snapshot save`",
  },
  {
    method: 'PUT',
    url: '/cluster/leave',
    why: 'a node leaves by stopping it (its lease is revoked and its processes move at once); PUT /api/v3/cluster/node/:id/state drains it',
  },
  {
    method: 'PUT',
    url: '/cluster/reallocation',
    why: 'processes move by a drain or a failover only; the leader picks their nodes',
  },
  {
    method: 'GET',
    url: '/cluster/deployments',
    why: 'each node applies the assignments in etcd itself; there is no queue of deployments',
  },
  {
    method: 'POST',
    url: '/cluster/events',
    why: "events are each node's own: ask each node's /api/v3/events",
  },
  {
    method: 'POST',
    url: '/cluster/events/log',
    why: "events are each node's own: ask each node's /api/v3/events",
  },
  {
    method: 'POST',
    url: '/cluster/events/process',
    why: "events are each node's own: ask each node's /api/v3/events/process",
  },
  {
    method: 'PUT',
    url: '/cluster/node/:id/fs',
    why: 'streamcore has no copy or move between filesystems; read the file and write it',
  },
];

export const UNSUPPORTED_DOCS: Record<string, RouteDoc> = Object.fromEntries(
  UNSUPPORTED_ROUTES.map((route) => [
    `${route.method} /api/v3${route.url}`,
    guarded({ summary: `Not implemented (501): ${route.why}`, responses: errors(...GUARDED, 501) }),
  ]),
);

/** Each route of `UNSUPPORTED_ROUTES`, answered 501 with its reason. */
export function registerUnsupportedRoutes(v3: FastifyInstance): void {
  for (const route of UNSUPPORTED_ROUTES) {
    v3.route({
      method: route.method,
      url: route.url,
      handler: () => {
        throw new ApiError('NOT_IMPLEMENTED', route.why, {
          message: 'Not implemented in a streamcore cluster',
        });
      },
    });
  }
}
