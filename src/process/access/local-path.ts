import { isAbsolute, resolve, sep } from 'node:path';
import type { AccessContext } from './context.js';
import { directionRefusal, type Direction } from './rules.js';

/** True when `path` is `root` or inside it (both absolute and normalised). */
export function isInside(path: string, root: string): boolean {
  const normalizedRoot = root.endsWith(sep) && root !== sep ? root.slice(0, -1) : root;
  return path === normalizedRoot || path.startsWith(normalizedRoot + sep);
}

/**
 * Why a local path must not be used in `direction`, or undefined. The path is resolved the way the
 * kernel reads it (against the encoders' working directory, `..` folded), then must lie inside
 * the disk directory or a path listed in `ffmpeg.access.<direction>.paths`, and outside the db
 * directory. Input paths must not hold glob characters that could spell `..` when ffmpeg's image2
 * demuxer expands them (`{..,x}`, `[.][.]`, `\.\.`).
 */
export function pathRefusal(
  written: string,
  direction: Direction,
  context: AccessContext,
): string | undefined {
  const root = context.diskRoots[0] ?? '/';
  const absolute = isAbsolute(written) ? resolve(written) : resolve(root, written);
  const verb = direction === 'input' ? 'reads' : 'writes';
  if (direction === 'input' && /[{}[\]\\]/.test(written)) {
    return `"${written}": input paths must not contain {, }, [, ] or \\ (glob patterns could name ..)`;
  }
  if (context.protectedDirs.some((dir) => isInside(absolute, dir))) {
    return `"${written}" ${verb} ${absolute}, inside the database directory`;
  }
  const rules = context.rules[direction];
  const inside = [...context.diskRoots, ...rules.paths].some((dir) => isInside(absolute, dir));
  if (!inside) {
    return `"${written}" ${verb} ${absolute}, outside the disk directory ${root} (other places: ffmpeg.access.${direction}.paths)`;
  }
  return ruleRefusal([written, `file:${absolute}`], direction, context);
}

/** The user's allow/block expressions (`ffmpeg.access.<direction>.allow|block`) for these forms. */
export function ruleRefusal(
  forms: readonly string[],
  direction: Direction,
  context: AccessContext,
): string | undefined {
  return directionRefusal(forms, direction, context.rules);
}
