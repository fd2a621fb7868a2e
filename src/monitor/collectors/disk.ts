import { statfs } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Collector } from './collector.js';

/**
 * `disk_total{path}` and `disk_usage{path}` in bytes (docs/metrics.md#what-each-value-means): size and used bytes (as `df`
 * counts them: blocks − free blocks) of the file system holding the disk storage directory;
 * `path` is that directory's absolute path.
 */
export function createDiskCollector(deps: { dir: string }): Collector {
  const path = resolve(deps.dir);
  const labels = [path];
  return {
    name: 'disk',
    async collect(emit) {
      const stats = await statfs(path);
      emit('disk_total', labels, stats.blocks * stats.bsize);
      emit('disk_usage', labels, (stats.blocks - stats.bfree) * stats.bsize);
    },
  };
}
