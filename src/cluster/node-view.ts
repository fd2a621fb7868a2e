import { candidatesOf } from './candidates.js';
import type { ClusterNodeDto } from './contract.js';
import { rfc3339 } from './rfc3339.js';
import type { ClusterSnapshot } from './view.js';

/**
 * The nodes as the reference's `ClusterNode` (`GET /api/v3/cluster`, `/cluster/node`), sorted by
 * id, from one picture of the cluster; `now` is the wall clock, ms.
 */
export function nodeViews(snapshot: ClusterSnapshot, now: number): ClusterNodeDto[] {
  const counts = candidatesOf(snapshot);
  return [...snapshot.nodes.values()]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((node) => {
      const lastContact = Math.max(0, now - node.updatedAt);
      const startedAt = node.startedAt ?? node.updatedAt;
      const { resources } = node;
      return {
        id: node.id,
        name: node.id,
        version: '',
        address: node.address,
        status: snapshot.nodeStates.get(node.id) ?? 'online',
        error: '',
        voter: true,
        leader: snapshot.leader === node.id,
        created_at: rfc3339(startedAt),
        uptime_seconds: Math.max(0, Math.floor((now - startedAt) / 1000)),
        last_contact_ms: lastContact,
        latency_ms: 0,
        core: {
          address: node.address,
          status: 'online',
          error: '',
          last_contact_ms: lastContact,
          latency_ms: 0,
          version: '',
        },
        resources: {
          is_throttling: false,
          ncpu: resources.ncpu,
          cpu_used: resources.cpuUsage * resources.ncpu,
          cpu_limit: 100 * resources.ncpu,
          memory_used_bytes: resources.memUsedBytes,
          memory_limit_bytes: resources.memTotalBytes,
          memory_total_bytes: resources.memTotalBytes,
          error: '',
          encoders: resources.encoders,
          processes: counts.get(node.id)?.processes ?? assignedTo(snapshot, node.id),
          max_processes: resources.maxProcesses,
        },
      };
    });
}

/** Processes assigned to `node` (a drained node is no candidate, yet has processes until they moved). */
function assignedTo(snapshot: ClusterSnapshot, node: string): number {
  let count = 0;
  for (const { value } of snapshot.assignments.values()) if (value.node === node) count++;
  return count;
}
