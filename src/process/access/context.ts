import type { OwnServer } from './network-target.js';
import type { AccessRules, Direction } from './rules.js';

/** What the policy checks against; built by the service from the config and the listening server. */
export interface AccessContext {
  /**
   * Absolute directories encoders may read and write: the disk filesystem's directory as
   * configured and its real path. The first is the encoders' working directory, against which
   * relative paths resolve.
   */
  diskRoots: readonly string[];
  /** Directories never open to encoders even when inside a root (the db directory with the config). */
  protectedDirs: readonly string[];
  own: OwnServer;
  rules: AccessRules;
}

/** Collects refusals; `where` is the field path (`output[0].address`, `options[3]`). */
export interface Findings {
  refuse(where: string, reason: string): void;
}

/** The checks the address and option scanners call on each other (tee options, `-i` values). */
export interface Checks {
  address(
    address: string,
    direction: Direction,
    format: string | undefined,
    where: string,
    depth: number,
  ): void;
  /** `k=v:k=v` option lists (tee slave options, `-segment_format_options`, `-x264-params`). */
  optionList(text: string, where: string, depth: number): void;
  /** A value that may hide a path or a URL somewhere inside it. */
  value(value: string, where: string, depth: number): void;
}

/** Nesting deeper than this (tee in crypto in cache …) is refused rather than followed. */
export const MAX_DEPTH = 8;
