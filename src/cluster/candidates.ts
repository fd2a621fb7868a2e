import type { ClusterSnapshot } from './view.js';
import type { Candidate } from './placement.js';

/**
 * The nodes that may take processes (registered and not drained), with what each was given so
 * far; `excluded` (the node a process leaves) is left out.
 */
export function candidatesOf(snapshot: ClusterSnapshot, excluded?: string): Map<string, Candidate> {
  const candidates = new Map<string, Candidate>();
  for (const [id, node] of snapshot.nodes) {
    if (id === excluded || snapshot.nodeStates.get(id) === 'maintenance') continue;
    candidates.set(id, { node, processes: 0, cpuReserved: 0 });
  }
  for (const [id, { value }] of snapshot.assignments) {
    const candidate = candidates.get(value.node);
    if (candidate === undefined) continue;
    candidate.processes++;
    candidate.cpuReserved += cpuLimitOf(snapshot, id);
  }
  return candidates;
}

/** The process's `limits.cpu_usage` as stored (0: none). */
export function cpuLimitOf(snapshot: ClusterSnapshot, id: string): number {
  const limits = snapshot.processes.get(id)?.value.config.limits as { cpu_usage?: unknown } | undefined;
  return typeof limits?.cpu_usage === 'number' ? limits.cpu_usage : 0;
}
