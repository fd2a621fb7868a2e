import type { Filesystem } from '../../storage/filesystem.js';
import { compileGlob, type Glob } from '../../storage/index.js';
import type { CleanupRule, ProcessConfig } from '../config/index.js';

export interface Filesystems {
  disk: Filesystem;
  mem: Filesystem;
}

/** A cleanup rule with its filesystem and compiled glob. */
export interface CompiledRule {
  fs: 'disk' | 'mem';
  glob: Glob;
  maxFiles: number;
  maxAgeMs: number;
  purgeOnDelete: boolean;
}

const PREFIX = /^(mem|memfs|disk|diskfs):(.*)$/;

/** Compiles a resolved rule; `undefined` when the pattern names no known filesystem. */
export function compileRule(rule: CleanupRule): CompiledRule | undefined {
  const match = PREFIX.exec(rule.pattern);
  if (match === null) return undefined;
  const path = match[2] as string;
  return {
    fs: match[1]?.startsWith('mem') === true ? 'mem' : 'disk',
    // Paths in a filesystem start with `/`; `memfs:cam1_*.ts` means the same as `memfs:/cam1_*.ts`.
    glob: compileGlob(path.startsWith('/') ? path : `/${path}`),
    maxFiles: rule.max_files,
    maxAgeMs: rule.max_file_age_seconds * 1000,
    purgeOnDelete: rule.purge_on_delete,
  };
}

/** The rules of every output of a config whose placeholders are resolved. */
export function rulesOf(resolved: ProcessConfig): CompiledRule[] {
  return resolved.output.flatMap((output) =>
    output.cleanup.map(compileRule).filter((rule): rule is CompiledRule => rule !== undefined),
  );
}

/**
 * Applies cleanup rules (docs/processes.md#states-orders-and-supervision): per rule, keep the `maxFiles` newest matching files and
 * delete matching files older than `maxAgeMs`. Each filesystem is listed once for all rules.
 * Returns how many files were deleted.
 */
export async function applyCleanup(
  rules: CompiledRule[],
  filesystems: Filesystems,
  nowMs: number,
): Promise<number> {
  let deleted = 0;
  for (const fs of ['disk', 'mem'] as const) {
    const own = rules.filter((rule) => rule.fs === fs && (rule.maxFiles > 0 || rule.maxAgeMs > 0));
    if (own.length === 0) continue;
    const files = await filesystems[fs].list();
    const doomed = new Set<string>();
    for (const rule of own) {
      // Newest first; the name breaks ties so that equal times give a stable choice.
      const matching = files
        .filter((file) => rule.glob.matches(file.name))
        .sort((a, b) => b.last_modified_ms - a.last_modified_ms || b.name.localeCompare(a.name));
      matching.forEach((file, index) => {
        if (rule.maxFiles > 0 && index >= rule.maxFiles) doomed.add(file.name);
        if (rule.maxAgeMs > 0 && nowMs - file.last_modified_ms > rule.maxAgeMs) doomed.add(file.name);
      });
    }
    for (const name of doomed) if (await filesystems[fs].remove(name)) deleted++;
  }
  return deleted;
}

/** Deletes every file matching a `purgeOnDelete` rule; returns how many. */
export async function purgeFiles(rules: CompiledRule[], filesystems: Filesystems): Promise<number> {
  let deleted = 0;
  for (const fs of ['disk', 'mem'] as const) {
    const own = rules.filter((rule) => rule.fs === fs && rule.purgeOnDelete);
    if (own.length === 0) continue;
    const files = await filesystems[fs].list();
    for (const file of files) {
      if (own.some((rule) => rule.glob.matches(file.name)) && (await filesystems[fs].remove(file.name)))
        deleted++;
    }
  }
  return deleted;
}
