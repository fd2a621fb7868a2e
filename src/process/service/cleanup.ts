import type { FileInfo, Filesystem } from '../../storage/filesystem.js';
import { compileGlob, type Glob } from '../../storage/index.js';
import type { CleanupRule, ProcessConfig } from '../config/index.js';

export interface Filesystems {
  disk: Filesystem;
  mem: Filesystem;
  /** The S3 filesystems, by their configured names. */
  s3?: readonly Filesystem[];
}

/** A cleanup rule with its filesystem and compiled glob. */
export interface CompiledRule {
  /** Name of the filesystem (`disk`, `mem`, or an S3 filesystem's name). */
  fs: string;
  /** The glob as written after the filesystem's name, starting with `/`. */
  pattern: string;
  glob: Glob;
  maxFiles: number;
  maxAgeMs: number;
  purgeOnDelete: boolean;
}

/** `<filesystem>:<glob>`: the reference's `[a-z]+` names, widened to what S3 names may hold. */
const PREFIX = /^([A-Za-z0-9_-]+):(.*)$/;
/** The reference's older names of the built-in filesystems. */
const LEGACY_NAMES: Readonly<Record<string, string>> = { diskfs: 'disk', memfs: 'mem' };

/** Compiles a resolved rule; `undefined` when the pattern names no filesystem. */
export function compileRule(rule: CleanupRule): CompiledRule | undefined {
  const match = PREFIX.exec(rule.pattern);
  if (match === null) return undefined;
  const name = match[1] as string;
  const path = match[2] as string;
  // Paths in a filesystem start with `/`; `memfs:cam1_*.ts` means the same as `memfs:/cam1_*.ts`.
  const pattern = path.startsWith('/') ? path : `/${path}`;
  return {
    fs: LEGACY_NAMES[name] ?? name,
    pattern,
    glob: compileGlob(pattern),
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

/** Every filesystem rules may name, with its name. */
function namedFilesystems(filesystems: Filesystems): Array<[string, Filesystem]> {
  return [
    ['disk', filesystems.disk],
    ['mem', filesystems.mem],
    ...(filesystems.s3 ?? []).map((fs): [string, Filesystem] => [fs.name, fs]),
  ];
}

/**
 * The files of `fs` the rules `own` may concern: everything at once for a local filesystem; for
 * a remote one (S3), one listing per distinct pattern, prefixed by its fixed start.
 */
async function candidates(fs: Filesystem, own: readonly CompiledRule[]): Promise<FileInfo[]> {
  if (fs.remote !== true) return fs.list();
  const lists = await Promise.all([...new Set(own.map((rule) => rule.pattern))].map((glob) => fs.list(glob)));
  const byName = new Map<string, FileInfo>();
  for (const file of lists.flat()) byName.set(file.name, file);
  return [...byName.values()];
}

/**
 * Applies cleanup rules (docs/processes.md#states-orders-and-supervision): per rule, keep the `maxFiles` newest matching files and
 * delete matching files older than `maxAgeMs`. Each filesystem is listed once for all rules
 * (a remote one once per pattern, and only when `remoteDue`). A filesystem that fails does not
 * keep the others from being cleaned; the first failure is thrown at the end. Returns how many
 * files were deleted.
 */
export async function applyCleanup(
  rules: CompiledRule[],
  filesystems: Filesystems,
  nowMs: number,
  remoteDue = true,
): Promise<number> {
  let deleted = 0;
  const failures: unknown[] = [];
  for (const [name, fs] of namedFilesystems(filesystems)) {
    if (fs.remote === true && !remoteDue) continue;
    const own = rules.filter((rule) => rule.fs === name && (rule.maxFiles > 0 || rule.maxAgeMs > 0));
    if (own.length === 0) continue;
    try {
      const files = await candidates(fs, own);
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
      for (const file of doomed) if (await fs.remove(file)) deleted++;
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
  return deleted;
}

/** Deletes every file matching a `purgeOnDelete` rule; returns how many. */
export async function purgeFiles(rules: CompiledRule[], filesystems: Filesystems): Promise<number> {
  let deleted = 0;
  for (const [name, fs] of namedFilesystems(filesystems)) {
    const own = rules.filter((rule) => rule.fs === name && rule.purgeOnDelete);
    if (own.length === 0) continue;
    await fs.settled?.();
    const files = await candidates(fs, own);
    for (const file of files) {
      if (own.some((rule) => rule.glob.matches(file.name)) && (await fs.remove(file.name))) deleted++;
    }
  }
  return deleted;
}
