import { RE2JS } from 're2js';
import { estimateProgramSize } from './estimate-program-size.js';
import { LabelPattern } from './label-pattern.js';

/** Default number of distinct patterns kept compiled. */
const DEFAULT_MAX_ENTRIES = 1024;

/** A compiled label pattern, or why it does not compile. */
export type CompiledPattern =
  | { ok: true; regexp: LabelPattern; /** Program size, instructions. */ size: number }
  | { ok: false; reason: string };

/**
 * Compiled RE2 patterns by source text, least recently used dropped first, so a query never pays
 * for compiling a pattern it (or another query) used recently, and a flood of distinct patterns
 * cannot grow memory without bound. Compile errors are cached too. A pattern whose program would
 * be larger than `maxProgramSize` instructions is refused, by its estimated size before compiling
 * (estimate-program-size.ts) and by its real size after.
 */
export class PatternCache {
  /** Oldest use first; `used`: the `uses` count when the entry was last moved to the end. */
  private readonly entries = new Map<string, { compiled: CompiledPattern; used: number }>();
  private uses = 0;
  private readonly maxProgramSize: number;
  private readonly maxEntries: number;

  constructor(maxProgramSize: number, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.maxProgramSize = maxProgramSize;
    this.maxEntries = maxEntries;
  }

  /** Is `source` compiled (or refused) already, so that `get` costs nothing? */
  has(source: string): boolean {
    return this.entries.has(source);
  }

  get(source: string): CompiledPattern {
    const uses = ++this.uses;
    const cached = this.entries.get(source);
    if (cached !== undefined) {
      // Re-inserting marks it most recently used (Map keeps insertion order). Only an entry that
      // may be in the older half moves: a query hits the same patterns again and again, and moving
      // each one on every hit cost more than the rest of a query's parsing.
      if (uses - cached.used > this.maxEntries / 2) {
        this.entries.delete(source);
        this.entries.set(source, cached);
        cached.used = uses;
      }
      return cached.compiled;
    }
    const compiled = compile(source, this.maxProgramSize);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(source, { compiled, used: uses });
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }
}

function compile(source: string, maxProgramSize: number): CompiledPattern {
  const estimate = estimateProgramSize(source);
  if (estimate > maxProgramSize) return tooLarge(`about ${estimate}`, maxProgramSize);
  try {
    const regexp = RE2JS.compile(source);
    const size = regexp.programSize();
    if (size > maxProgramSize) return tooLarge(String(size), maxProgramSize);
    return { ok: true, regexp: new LabelPattern(regexp), size };
  } catch (error) {
    return {
      ok: false,
      reason: `invalid RE2 pattern: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function tooLarge(size: string, maxProgramSize: number): CompiledPattern {
  return {
    ok: false,
    reason: `pattern too large: it compiles to ${size} instructions, at most ${maxProgramSize} are allowed (metrics.query.max_program_size)`,
  };
}
