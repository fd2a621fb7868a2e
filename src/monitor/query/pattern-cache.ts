import { RE2JS } from 're2js';

/** Default number of distinct patterns kept compiled. */
const DEFAULT_MAX_ENTRIES = 1024;

/** A compiled label pattern, or why it does not compile. */
export type CompiledPattern = { ok: true; regexp: RE2JS } | { ok: false; reason: string };

/**
 * Compiled RE2 patterns by source text, least recently used dropped first, so a query never pays
 * for compiling a pattern it (or another query) used recently, and a flood of distinct patterns
 * cannot grow memory without bound. Compile errors are cached too.
 */
export class PatternCache {
  private readonly entries = new Map<string, CompiledPattern>();
  private readonly maxEntries: number;

  constructor(maxEntries = DEFAULT_MAX_ENTRIES) {
    this.maxEntries = maxEntries;
  }

  get(source: string): CompiledPattern {
    const cached = this.entries.get(source);
    if (cached !== undefined) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.entries.delete(source);
      this.entries.set(source, cached);
      return cached;
    }
    const compiled = compile(source);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(source, compiled);
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }
}

function compile(source: string): CompiledPattern {
  try {
    return { ok: true, regexp: RE2JS.compile(source) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
