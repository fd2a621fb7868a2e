import { ApiError } from '../http/index.js';
import type { EtcdClient } from './etcd-client.js';
import { orUnavailable } from './etcd-unavailable.js';
import { keys } from './keys.js';
import { rfc3339 } from './rfc3339.js';

/** A lock is held for at least this long and at most this long (seconds): etcd's lease bounds it. */
const MIN_LOCK_SECONDS = 1;
const MAX_LOCK_SECONDS = 86_400;
/** A key or lock name: one path segment, so that it can be named in a URL. */
const NAME = /^[^/\s]{1,256}$/;

export interface StoredValue {
  value: string;
  /** RFC 3339. */
  updated_at: string;
}

export interface HeldLock {
  name: string;
  /** RFC 3339. */
  valid_until: string;
}

/**
 * The cluster's key-value store and locks (the reference's `kvs`), in etcd under the cluster's
 * prefix: a value stays until deleted; a lock lives under a lease of its own that etcd ends at
 * `valid_until`, so a lock whose holder is gone still ends. Every failure of etcd is the 503.
 */
export class KvStore {
  constructor(
    private readonly etcd: EtcdClient,
    /** Wall clock, ms. */
    private readonly now: () => number,
  ) {}

  async set(key: string, value: string): Promise<void> {
    checkName('key', key);
    const stored: StoredValue = { value, updated_at: rfc3339(this.now()) };
    await orUnavailable(() =>
      this.etcd.txn([], [{ put: { key: keys.kv(key), value: JSON.stringify(stored) } }]),
    );
  }

  async get(key: string): Promise<StoredValue | undefined> {
    const { kvs } = await orUnavailable(() => this.etcd.range(keys.kv(key)));
    return kvs[0] === undefined ? undefined : (JSON.parse(kvs[0].value) as StoredValue);
  }

  /** False when there was no such key. */
  async unset(key: string): Promise<boolean> {
    return (await this.deleteExisting(keys.kv(key))) !== undefined;
  }

  async list(): Promise<Map<string, StoredValue>> {
    const { kvs } = await orUnavailable(() => this.etcd.range(keys.kv(''), true));
    return new Map(kvs.map((kv) => [kv.key.slice(keys.kv('').length), JSON.parse(kv.value) as StoredValue]));
  }

  /** Takes the lock until `validUntil` (unix ms); 409 while another holds it. */
  async lock(name: string, validUntil: number): Promise<HeldLock> {
    checkName('name', name);
    const seconds = Math.ceil((validUntil - this.now()) / 1000);
    if (!Number.isFinite(seconds) || seconds < MIN_LOCK_SECONDS || seconds > MAX_LOCK_SECONDS)
      throw new ApiError(
        'BAD_REQUEST',
        [`valid_until: must be between ${MIN_LOCK_SECONDS} s and ${MAX_LOCK_SECONDS} s from now`],
        { message: 'Invalid lock' },
      );
    const held: HeldLock = { name, valid_until: rfc3339(validUntil) };
    const key = keys.lock(name);
    const lease = await orUnavailable(() => this.etcd.grant(seconds));
    const result = await orUnavailable(() =>
      this.etcd.txn(
        [{ key, target: 'CREATE', createRevision: 0 }],
        [{ put: { key, value: JSON.stringify(held), lease } }],
        [{ range: { key } }],
      ),
    );
    if (result.succeeded) return held;
    await this.etcd.revoke(lease).catch(() => undefined);
    const holder = result.ranges[0]?.[0];
    const until = holder === undefined ? '' : ` until ${(JSON.parse(holder.value) as HeldLock).valid_until}`;
    throw new ApiError('CONFLICT', `the lock "${name}" is held${until}`, { message: 'Lock held' });
  }

  /** False when no such lock is held. */
  async unlock(name: string): Promise<boolean> {
    const lease = await this.deleteExisting(keys.lock(name));
    if (lease === undefined) return false;
    // The lock's own lease: ended at once rather than at its time.
    if (lease !== '0') await this.etcd.revoke(lease).catch(() => undefined);
    return true;
  }

  async locks(): Promise<HeldLock[]> {
    const { kvs } = await orUnavailable(() => this.etcd.range(keys.lock(''), true));
    return kvs.map((kv) => JSON.parse(kv.value) as HeldLock);
  }

  /** Deletes `key` if it exists, in one transaction; its lease, or undefined when it did not exist. */
  private async deleteExisting(key: string): Promise<string | undefined> {
    const result = await orUnavailable(() =>
      this.etcd.txn(
        [{ key, target: 'CREATE', createRevision: 0 }],
        [],
        [{ range: { key } }, { delete: { key } }],
      ),
    );
    return result.succeeded ? undefined : (result.ranges[0]?.[0]?.lease ?? '0');
  }
}

function checkName(field: string, name: string): void {
  if (!NAME.test(name))
    throw new ApiError('BAD_REQUEST', [`${field}: must be 1 to 256 characters without "/" or spaces`], {
      message: 'Invalid name',
    });
}
