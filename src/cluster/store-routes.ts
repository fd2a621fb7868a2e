import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import type { KeyValuesDto, LockDto, StoredProcessDto, StoreNodeDto } from './api-contract.js';
import type { ProcessDocument } from './keys.js';
import type { KvStore } from './kv-store.js';
import { rfc3339 } from './rfc3339.js';
import type { ClusterSnapshot } from './view.js';

export interface StoreRouteSource {
  snapshot: () => ClusterSnapshot;
  kv: KvStore;
}

/**
 * The reference's `/api/v3/cluster/db/*`: the cluster's store as this node last read it from
 * etcd (every 0.5 s; the key-value store and the locks are read at once).
 */
export function registerStoreRoutes(v3: FastifyInstance, source: StoreRouteSource): void {
  v3.get('/cluster/db/process', (): StoredProcessDto[] =>
    [...source.snapshot().processes.values()]
      .map(({ value }) => storedProcess(value))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  );

  v3.get(
    '/cluster/db/process/:id',
    (request: FastifyRequest<{ Params: { id: string } }>): StoredProcessDto => {
      const { id } = request.params;
      const stored = source.snapshot().processes.get(id);
      if (stored === undefined)
        throw new ApiError('NOT_FOUND', `process not found: ${id}`, { message: 'Unknown process' });
      return storedProcess(stored.value);
    },
  );

  v3.get('/cluster/db/map/process', (): Record<string, string> => {
    const map: Record<string, string> = {};
    for (const [id, { value }] of source.snapshot().assignments) map[id] = value.node;
    return map;
  });

  // A drain's moves: the node a process goes to while the one it leaves still has it.
  v3.get('/cluster/db/map/reallocate', (): Record<string, string> => {
    const map: Record<string, string> = {};
    for (const [id, { value }] of source.snapshot().assignments)
      if (value.after !== undefined) map[id] = value.node;
    return map;
  });

  v3.get('/cluster/db/node', (): StoreNodeDto[] => {
    const snapshot = source.snapshot();
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
