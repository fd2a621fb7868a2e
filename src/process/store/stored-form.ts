import { Type, type Static, type TSchema } from 'typebox';
import { ProcessConfig, type ProcessLimits } from '../config/index.js';
import type { Order } from '../supervise/index.js';

/**
 * The stored form of a process in db.json, derived from the process contract
 * (process/config/contract.ts) in datarhei Core v16's store format (version 4): the config's
 * fields in the contract's order, except that `type` is not stored (always ffmpeg), `ffversion`
 * follows `reference` (the reference writes its ffmpeg version there; streamcore ""), and the
 * limits are flattened to `limit_<name>`, memory in bytes. A field added to the contract is
 * stored and loaded back without an edit here.
 */

const MIB = 1024 * 1024;

const { id, reference, limits } = ProcessConfig.properties;
/** The fields stored as the contract has them; `id` and `reference` lead, `type` is not stored. */
const copied = Type.Omit(ProcessConfig, ['id', 'type', 'reference', 'limits']).properties;

/** Each limit as the store spells it, and what the contract's value is multiplied by. */
const STORED_LIMITS = {
  cpu_usage: { name: 'limit_cpu_usage', scale: 1 },
  memory_mbytes: { name: 'limit_memory_bytes', scale: MIB },
  waitfor_seconds: { name: 'limit_waitfor_seconds', scale: 1 },
} as const satisfies Record<keyof ProcessLimits, { name: string; scale: number }>;

export const StoredProcessConfig = Type.Object({
  id,
  reference,
  ffversion: Type.String(),
  ...copied,
  limit_cpu_usage: limits.properties.cpu_usage,
  limit_memory_bytes: Type.Integer({ minimum: 0, description: 'bytes; 0 = no limit' }),
  limit_waitfor_seconds: limits.properties.waitfor_seconds,
});
export type StoredProcessConfig = Static<typeof StoredProcessConfig>;

/** The value at `process[<id>]` of db.json. */
export const ProcessEntry = Type.Object({
  id,
  reference,
  config: StoredProcessConfig,
  created_at: Type.Integer({ description: 'seconds since the epoch' }),
  updated_at: Type.Integer({ description: 'seconds since the epoch' }),
  order: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
});
export type ProcessEntry = Static<typeof ProcessEntry>;

/**
 * A copy of `value` holding exactly the properties `schema` declares, in its order, arrays and
 * nested objects copied the same way: what is written is what the schema says, nothing a value
 * happens to carry besides.
 */
function copyBySchema(schema: TSchema, value: unknown): unknown {
  const { properties, items } = schema as { properties?: Record<string, TSchema>; items?: TSchema };
  if (properties !== undefined && typeof value === 'object' && value !== null) {
    const source = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [name, copyBySchema(property, source[name])]),
    );
  }
  if (items !== undefined && Array.isArray(value)) return value.map((item) => copyBySchema(items, item));
  return value;
}

/** The store form of one process config. */
export function configToStore(config: ProcessConfig): StoredProcessConfig {
  const flattened = Object.fromEntries(
    Object.entries(STORED_LIMITS).map(([name, { name: storedName, scale }]) => [
      storedName,
      config.limits[name as keyof ProcessLimits] * scale,
    ]),
  );
  return copyBySchema(StoredProcessConfig, { ...config, ffversion: '', ...flattened }) as StoredProcessConfig;
}

/**
 * A stored config as a config body, to be read and validated like a request: the stored fields
 * as they are (a body's unknown fields are ignored), the limits gathered back into `limits`
 * (memory rounded up to whole MiB), `type` ffmpeg.
 */
export function storeToBody(
  config: Record<string, unknown>,
  id: string,
  reference: unknown,
): Record<string, unknown> {
  const gathered = Object.fromEntries(
    Object.entries(STORED_LIMITS).map(([name, { name: storedName, scale }]) => {
      const stored = config[storedName];
      return [name, typeof stored === 'number' && scale !== 1 ? Math.ceil(stored / scale) : stored];
    }),
  );
  return {
    ...config,
    id,
    type: 'ffmpeg',
    reference:
      typeof config.reference === 'string'
        ? config.reference
        : typeof reference === 'string'
          ? reference
          : '',
    limits: gathered,
  };
}

/** What one process entry is written from. */
export interface StoredProcessSource {
  config: ProcessConfig;
  createdAt: number;
  updatedAt: number;
  order: Order;
}

/** The value at `process[<id>]` of the file for one process. */
export function storeEntry(record: StoredProcessSource): ProcessEntry {
  return {
    id: record.config.id,
    reference: record.config.reference,
    config: configToStore(record.config),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    order: record.order,
  };
}
