import type { Collector } from '../monitor/index.js';
import type { Filesystem } from './filesystem.js';

/**
 * `filesystem_usage`, `filesystem_files` and `filesystem_limit` (−1 when unlimited) for each
 * filesystem, labelled with its metric name (docs/metrics.md#what-each-value-means). The disk figure comes from a cached walk
 * (see DiskFilesystem `usageCacheMs`), so a tick does not rescan the tree every interval.
 */
export function createFilesystemCollector(filesystems: readonly Filesystem[]): Collector {
  return {
    name: 'filesystem',
    async collect(emit) {
      const usages = await Promise.all(filesystems.map((fs) => fs.usage()));
      filesystems.forEach((fs, index) => {
        const usage = usages[index];
        if (usage === undefined) return;
        const labels = [fs.metricName];
        emit('filesystem_usage', labels, usage.usage_bytes);
        emit('filesystem_files', labels, usage.files);
        emit('filesystem_limit', labels, usage.limit_bytes);
      });
    },
  };
}
