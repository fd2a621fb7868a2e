import type { ClusterSnapshot } from './view.js';
import { count, emptyCandidate, type Candidate, type Placing } from './placement.js';

/**
 * The nodes that may take processes (registered and not drained), with what each was given so
 * far; `excluded` (the node a process leaves) is left out.
 */
export function candidatesOf(snapshot: ClusterSnapshot, excluded?: string): Map<string, Candidate> {
  const candidates = new Map<string, Candidate>();
  for (const [id, node] of snapshot.nodes) {
    if (id === excluded || snapshot.nodeStates.get(id) === 'maintenance') continue;
    candidates.set(id, emptyCandidate(node));
  }
  for (const [id, { value }] of snapshot.assignments) {
    const candidate = candidates.get(value.node);
    if (candidate !== undefined) count(candidate, placingOf(snapshot, id));
  }
  return candidates;
}

/** What placement needs of a stored process. */
export function placingOf(snapshot: ClusterSnapshot, id: string): Placing {
  return placingOfConfig(snapshot.processes.get(id)?.value.config);
}

/** What placement needs of a process config as the API takes it (a create's body, a stored config). */
export function placingOfConfig(config: unknown): Placing {
  const { limits, reference } = (config ?? {}) as { limits?: { cpu_usage?: unknown }; reference?: unknown };
  return {
    cpuLimit: typeof limits?.cpu_usage === 'number' ? limits.cpu_usage : 0,
    reference: typeof reference === 'string' ? reference : '',
  };
}
