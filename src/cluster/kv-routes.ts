import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, RequestCheck } from '../http/index.js';
import { LockBody, SetKeyValueBody } from './kv-contract.js';
import type { HeldLock, KvStore, StoredValue } from './kv-store.js';

const setCheck = new RequestCheck(SetKeyValueBody);
const lockCheck = new RequestCheck(LockBody);

/**
 * The key-value store and locks (the reference has them on its internal node API, `/v1/kv` and
 * `/v1/lock`, with these bodies): here on the API, behind its guard, for scripts that coordinate
 * through the cluster.
 */
export function registerKvRoutes(v3: FastifyInstance, kv: KvStore): void {
  v3.post('/cluster/kv', async (request): Promise<string> => {
    const read = setCheck.read(request.body);
    if (read.value === undefined)
      throw new ApiError('BAD_REQUEST', read.problems, { message: 'Invalid key' });
    await kv.set(read.value.key, read.value.value);
    return 'OK';
  });

  v3.get(
    '/cluster/kv/:key',
    async (request: FastifyRequest<{ Params: { key: string } }>): Promise<StoredValue> => {
      const stored = await kv.get(request.params.key);
      if (stored === undefined) throw notFound('key', request.params.key);
      return stored;
    },
  );

  v3.delete(
    '/cluster/kv/:key',
    async (request: FastifyRequest<{ Params: { key: string } }>): Promise<string> => {
      if (!(await kv.unset(request.params.key))) throw notFound('key', request.params.key);
      return 'OK';
    },
  );

  v3.post('/cluster/lock', async (request): Promise<HeldLock> => {
    const read = lockCheck.read(request.body);
    if (read.value === undefined)
      throw new ApiError('BAD_REQUEST', read.problems, { message: 'Invalid lock' });
    const until = Date.parse(read.value.valid_until);
    if (Number.isNaN(until))
      throw new ApiError('BAD_REQUEST', ['valid_until: must be an RFC 3339 time'], {
        message: 'Invalid lock',
      });
    return kv.lock(read.value.name, until);
  });

  v3.delete(
    '/cluster/lock/:name',
    async (request: FastifyRequest<{ Params: { name: string } }>): Promise<string> => {
      if (!(await kv.unlock(request.params.name))) throw notFound('lock', request.params.name);
      return 'OK';
    },
  );
}

function notFound(what: string, name: string): ApiError {
  return new ApiError('NOT_FOUND', `no ${what} "${name}" in the cluster`, { message: `Unknown ${what}` });
}
