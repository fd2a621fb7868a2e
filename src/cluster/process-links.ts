import { parseOutputReference } from '../process/index.js';
import type { ClusterSnapshot } from './view.js';

/**
 * The processes whose outputs a process config reads (`#<id>:output=<out>` inputs): the encoder
 * follows such an input to the other process's output on its own node, so both must run there.
 */
export function linkedIds(config: unknown): string[] {
  const inputs = (config as { input?: unknown } | undefined)?.input;
  if (!Array.isArray(inputs)) return [];
  const ids = new Set<string>();
  for (const input of inputs) {
    const address = (input as { address?: unknown } | undefined)?.address;
    const reference = typeof address === 'string' ? parseOutputReference(address) : undefined;
    if (reference !== undefined) ids.add(reference.processId);
  }
  return [...ids];
}

/**
 * The processes that must run on one node (docs/cluster.md#placement): those linked by output
 * references, directly or through others (a chain of processes each reading the previous one).
 */
export class ProcessGroups {
  private readonly parent = new Map<string, string>();
  private readonly members = new Map<string, string[]>();

  /** The groups of the stored processes, and of `extra` (a create not stored yet) when given. */
  constructor(snapshot: ClusterSnapshot, extra?: { id: string; config: unknown }) {
    for (const [id, { value }] of snapshot.processes) this.link(id, linkedIds(value.config));
    if (extra !== undefined) this.link(extra.id, linkedIds(extra.config));
    for (const id of this.parent.keys()) {
      const root = this.root(id);
      this.members.set(root, [...(this.members.get(root) ?? []), id]);
    }
  }

  /** The other processes that must run where `id` runs. */
  companions(id: string): string[] {
    if (!this.parent.has(id)) return [];
    return (this.members.get(this.root(id)) ?? []).filter((member) => member !== id);
  }

  private link(id: string, linked: string[]): void {
    if (!this.parent.has(id)) this.parent.set(id, id);
    for (const other of linked) {
      if (!this.parent.has(other)) this.parent.set(other, other);
      const a = this.root(id);
      const b = this.root(other);
      if (a !== b) this.parent.set(a < b ? b : a, a < b ? a : b);
    }
  }

  private root(id: string): string {
    let current = id;
    for (let up = this.parent.get(current); up !== undefined && up !== current; up = this.parent.get(up))
      current = up;
    return current;
  }
}

/**
 * The node a companion of `id` runs on (or is placed on in this pass, `placed`), when `usable`
 * says that node may take `id` too; undefined when `id` has no companion on such a node.
 */
export function companionNode(
  groups: ProcessGroups,
  id: string,
  nodeOf: (id: string) => string | undefined,
  usable: (node: string) => boolean,
): string | undefined {
  for (const companion of groups.companions(id)) {
    const node = nodeOf(companion);
    if (node !== undefined && usable(node)) return node;
  }
  return undefined;
}
