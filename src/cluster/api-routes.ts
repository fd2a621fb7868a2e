import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EtcdClient } from './etcd-client.js';
import { KvStore } from './kv-store.js';
import { registerKvRoutes } from './kv-routes.js';
import { transferLeadership } from './leadership.js';
import { registerNodeRoutes, type NodeRouteSource } from './node-routes.js';
import { askPeer, nodeAddress, passOn } from './peer-request.js';
import { registerStoreRoutes } from './store-routes.js';
import { registerUnsupportedRoutes } from './unsupported-routes.js';
import type { ClusterSnapshot } from './view.js';

export interface ClusterApiSource extends NodeRouteSource {
  etcd: EtcdClient;
  /** Reads etcd now (`ClusterView.refresh`). */
  refresh: () => Promise<ClusterSnapshot>;
}

/**
 * The reference's `/api/v3/cluster/*` routes beyond the process aliases and the drain
 * (docs/cluster.md#the-references-cluster-routes), all under the API's guard: the nodes, the
 * store, the key-value store and locks, the leadership transfer, and a 501 for each route that
 * has no counterpart here.
 */
export function registerClusterApi(v3: FastifyInstance, source: ClusterApiSource): void {
  const kv = new KvStore(source.etcd, source.now);
  registerNodeRoutes(v3, source);
  registerStoreRoutes(v3, { snapshot: source.snapshot, refresh: source.refresh, kv });
  registerKvRoutes(v3, kv);

  v3.put('/cluster/transfer/:id', async (request: FastifyRequest<{ Params: { id: string } }>) => {
    await transferLeadership(source.etcd, source.snapshot(), request.params.id);
    return 'OK';
  });

  // The probe of a config on the node the client names (the reference's `coreid`), else here.
  v3.post(
    '/cluster/process/probe',
    async (request: FastifyRequest<{ Querystring: { coreid?: string } }>, reply) => {
      const node = request.query.coreid || source.me;
      const answer = await askPeer(source, request, nodeAddress(source, node), '/api/v3/process/probe', {
        method: 'POST',
        json: request.body ?? {},
      });
      return passOn(reply, answer);
    },
  );

  registerUnsupportedRoutes(v3);
}
