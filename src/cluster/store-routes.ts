import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { StoredProcessDto, StoreNodeDto } from './api-contract.js';
import type { KeyValuesDto, LockDto } from './kv-contract.js';
import type { ProcessDocument } from './keys.js';
import type { KvStore } from './kv-store.js';
import { rfc3339 } from './rfc3339.js';
import type { ClusterSnapshot } from './view.js';

export interface StoreRouteSource {
  snapshot: () => ClusterSnapshot;
  /** Reads etcd now (`ClusterView.refresh`). */
  refresh: () => Promise<ClusterSnapshot>;
  kv: KvStore;
}

/**
 * The reference's `/api/v3/cluster/db/*`: the cluster's store as etcd holds it now, so that a
 * change made through any node shows through every other at once; while etcd cannot be read,
 * as this node last read it.
 */
export function registerStoreRoutes(v3: FastifyInstance, source: StoreRouteSource): void {
  const read = (): Promise<ClusterSnapshot> => source.refresh().catch(() => source.snapshot());
  v3.get('/cluster/db/process', async (): Promise<StoredProcessDto[]> =>
    [...(await read()).processes.values()]
      .map(({ value }) => storedProcess(value))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  );

  v3.get(
    '/cluster/db/process/:id',
    async (request: FastifyRequest<{ Params: { id: string } }>): Promise<StoredProcessDto> => {
      const { id } = request.params;
      const stored = (await read()).processes.get(id);
      if (stored === undefined)
        throw new ApiError('NOT_FOUND', `process not found: ${id}`, { message: 'Unknown process' });
      return storedProcess(stored.value);
    },
  );

  v3.get('/cluster/db/map/process', async (): Promise<Record<string, string>> => {
    const map: Record<string, string> = {};
    for (const [id, { value }] of (await read()).assignments) map[id] = value.node;
    return map;
  });

  // A drain's moves: the node a process goes to while the one it leaves still has it.
  v3.get('/cluster/db/map/reallocate', async (): Promise<Record<string, string>> => {
    const map: Record<string, string> = {};
    for (const [id, { value }] of (await read()).assignments)
      if (value.after !== undefined) map[id] = value.node;
    return map;
  });

  v3.get('/cluster/db/node', async (): Promise<StoreNodeDto[]> => {
    const snapshot = await read();
    return [...snapshot.nodes.values()]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((node) => ({
        id: node.id,
        state: snapshot.nodeStates.get(node.id) ?? 'online',
        updated_at: rfc3339(node.updatedAt),
      }));
  });

  v3.get('/cluster/db/kv', async (): Promise<KeyValuesDto> => Object.fromEntries(await source.kv.list()));

  v3.get('/cluster/db/locks', (): Promise<LockDto[]> => source.kv.locks());
}

/** A process as the reference's store answers it: owner and domain are always empty here. */
function storedProcess(document: ProcessDocument): StoredProcessDto {
  return {
    id: document.id,
    owner: '',
    domain: '',
    type: 'ffmpeg',
    reference: document.reference,
    created_at: document.created_at,
    updated_at: document.updated_at,
    config: document.config,
    metadata: document.metadata,
  };
}
