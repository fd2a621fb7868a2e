import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Collector } from './collector.js';
import type { CgroupReader } from './cgroup-reader.js';
import { parseMeminfo } from './parse/index.js';

/**
 * `mem_total` and `mem_free` in bytes (docs/metrics.md#what-each-value-means): MemTotal and MemAvailable of /proc/meminfo, or
 * inside a cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`) whose limit is below the host's
 * memory, that limit and limit − usage.
 */
export function createMemoryCollector(deps: { procRoot: string; cgroup: CgroupReader }): Collector {
  return {
    name: 'memory',
    async collect(emit) {
      const host = parseMeminfo(await readFile(join(deps.procRoot, 'meminfo'), 'utf8'));
      const limit = await deps.cgroup.memoryLimit();
      if (limit !== undefined && limit.maxBytes < host.totalBytes) {
        emit('mem_total', [], limit.maxBytes);
        emit('mem_free', [], Math.max(0, limit.maxBytes - limit.currentBytes));
        return;
      }
      emit('mem_total', [], host.totalBytes);
      emit('mem_free', [], host.availableBytes);
    },
  };
}
