import type { Config } from '../config/index.js';
import type { NodeRecord } from './keys.js';

/**
 * How processes with the same `reference` are placed (`cluster.reference_placement`):
 * `load` by load alone, `spread` on as many nodes as there is room, `together` on the node that
 * already has most of them (the reference's next version always does that).
 */
export type ReferencePlacement = Config['cluster']['reference_placement'];

/** What placement knows of a node: its registration and what the cluster already gave it. */
export interface Candidate {
  node: NodeRecord;
  /** Processes assigned to it. */
  processes: number;
  /** Sum of the `limits.cpu_usage` of those processes, percent of one CPU. */
  cpuReserved: number;
  /** Of those processes, how many carry each non-empty `reference`. */
  references: Map<string, number>;
}

/** What placement needs of one process. */
export interface Placing {
  /** Its `limits.cpu_usage` (0: none), percent of one CPU. */
  cpuLimit: number;
  /** Its `reference` ('' counts as none). */
  reference: string;
}

export function emptyCandidate(node: NodeRecord): Candidate {
  return { node, processes: 0, cpuReserved: 0, references: new Map() };
}

/** Counts `process` on `candidate` (`sign` -1: takes it off again). */
export function count(candidate: Candidate, process: Placing, sign: 1 | -1 = 1): void {
  candidate.processes += sign;
  candidate.cpuReserved += sign * process.cpuLimit;
  if (process.reference === '') return;
  const next = (candidate.references.get(process.reference) ?? 0) + sign;
  if (next > 0) candidate.references.set(process.reference, next);
  else candidate.references.delete(process.reference);
}

/** Whether `candidate` has room for one more `process`: below its `ffmpeg.max_processes`, CPU left for its limit. */
export function hasRoom(candidate: Candidate, process: Placing): boolean {
  const max = candidate.node.resources.maxProcesses;
  if (max > 0 && candidate.processes >= max) return false;
  const capacity = 100 * Math.max(1, candidate.node.resources.ncpu);
  return process.cpuLimit <= 0 || candidate.cpuReserved + process.cpuLimit <= capacity;
}

/** Processes per CPU: what placement evens out. */
export function loadOf(candidate: Candidate): number {
  return candidate.processes / Math.max(1, candidate.node.resources.ncpu);
}

/**
 * The node a process goes to (docs/cluster.md#placement): among the candidates with room, first
 * by the reference rule (`spread`: the fewest processes of its reference; `together`: the most),
 * then the fewest processes per CPU, then the least CPU in use, then by id so that every node
 * computes the same answer from the same picture.
 */
export function placeProcess(
  candidates: readonly Candidate[],
  process: Placing,
  rule: ReferencePlacement = 'load',
): string | undefined {
  const affinity = (candidate: Candidate): number => {
    if (rule === 'load' || process.reference === '') return 0;
    const same = candidate.references.get(process.reference) ?? 0;
    return rule === 'spread' ? same : -same;
  };
  let best: { id: string; affinity: number; score: number; cpu: number } | undefined;
  for (const candidate of candidates) {
    if (!hasRoom(candidate, process)) continue;
    const next = {
      id: candidate.node.id,
      affinity: affinity(candidate),
      score: loadOf(candidate),
      cpu: candidate.node.resources.cpuUsage,
    };
    if (best === undefined || before(next, best)) best = next;
  }
  return best?.id;
}

function before(
  a: { id: string; affinity: number; score: number; cpu: number },
  b: { id: string; affinity: number; score: number; cpu: number },
): boolean {
  if (a.affinity !== b.affinity) return a.affinity < b.affinity;
  if (a.score !== b.score) return a.score < b.score;
  if (a.cpu !== b.cpu) return a.cpu < b.cpu;
  return a.id < b.id;
}
