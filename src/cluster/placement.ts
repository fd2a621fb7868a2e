import type { NodeRecord } from './keys.js';

/** What placement knows of a node: its registration and what the cluster already gave it. */
export interface Candidate {
  node: NodeRecord;
  /** Processes assigned to it. */
  processes: number;
  /** Sum of the `limits.cpu_usage` of those processes, percent of one CPU. */
  cpuReserved: number;
}

/**
 * The node a process goes to (docs/cluster.md#placement): among the candidates that have room
 * (below their `ffmpeg.max_processes`, and CPU left for the process's `limits.cpu_usage` when it
 * sets one), the one with the fewest processes per CPU, then the least CPU in use, then by id so
 * that every node computes the same answer from the same picture.
 */
export function placeProcess(candidates: readonly Candidate[], cpuLimit = 0): string | undefined {
  let best: { id: string; score: number; cpu: number } | undefined;
  for (const candidate of candidates) {
    const { node } = candidate;
    const max = node.resources.maxProcesses;
    if (max > 0 && candidate.processes >= max) continue;
    const capacity = 100 * Math.max(1, node.resources.ncpu);
    if (cpuLimit > 0 && candidate.cpuReserved + cpuLimit > capacity) continue;
    const score = candidate.processes / Math.max(1, node.resources.ncpu);
    const cpu = node.resources.cpuUsage;
    if (
      best === undefined ||
      score < best.score ||
      (score === best.score && (cpu < best.cpu || (cpu === best.cpu && node.id < best.id)))
    )
      best = { id: node.id, score, cpu };
  }
  return best?.id;
}
