/** Totals of closed sessions for one (remote, local, reference) group. */
export interface HistoryEntry {
  remote: string;
  local: string;
  reference: string;
  sessions: number;
  rx_bytes: number;
  tx_bytes: number;
}

/** The persisted form (`<db.dir>/sessions/<collector>.json`). */
export interface HistoryFile {
  version: 1;
  entries: HistoryEntry[];
}

/**
 * Bound on the number of groups per collector. Beyond it, new groups are folded into one entry
 * with remote, local and reference `*`, so a flood of distinct clients cannot grow memory or the
 * persisted file without limit; the totals stay exact.
 */
export const MAX_HISTORY_ENTRIES = 10_000;
const OVERFLOW_KEY = '*\u0000*\u0000*';

/** The closed sessions of one collector, grouped by remote address, local path and reference. */
export class SessionHistory {
  private readonly entries = new Map<string, HistoryEntry>();
  private totals = { sessions: 0, rx_bytes: 0, tx_bytes: 0 };

  constructor(private readonly maxEntries = MAX_HISTORY_ENTRIES) {}

  add(
    remote: string,
    local: string,
    reference: string,
    rxBytes: number,
    txBytes: number,
    sessions = 1,
  ): void {
    let key = `${remote}\u0000${local}\u0000${reference}`;
    let entry = this.entries.get(key);
    if (entry === undefined && this.entries.size >= this.maxEntries) {
      key = OVERFLOW_KEY;
      entry = this.entries.get(key);
      remote = local = reference = '*';
    }
    if (entry === undefined) {
      entry = { remote, local, reference, sessions: 0, rx_bytes: 0, tx_bytes: 0 };
      this.entries.set(key, entry);
    }
    entry.sessions += sessions;
    entry.rx_bytes += rxBytes;
    entry.tx_bytes += txBytes;
    this.totals.sessions += sessions;
    this.totals.rx_bytes += rxBytes;
    this.totals.tx_bytes += txBytes;
  }

  /** Sessions and bytes of every closed session. */
  get total(): { sessions: number; rx_bytes: number; tx_bytes: number } {
    return this.totals;
  }

  list(): readonly HistoryEntry[] {
    return [...this.entries.values()];
  }

  toFile(): HistoryFile {
    return { version: 1, entries: this.list().map((entry) => ({ ...entry })) };
  }

  /** Adds the entries of a persisted file; malformed entries are skipped and counted. */
  load(data: unknown): { loaded: number; skipped: number } {
    let loaded = 0;
    let skipped = 0;
    const entries = (data as { entries?: unknown } | null)?.entries;
    if (!Array.isArray(entries)) return { loaded, skipped: 1 };
    for (const item of entries as unknown[]) {
      if (!isEntry(item)) {
        skipped++;
        continue;
      }
      this.add(item.remote, item.local, item.reference, item.rx_bytes, item.tx_bytes, item.sessions);
      loaded++;
    }
    return { loaded, skipped };
  }
}

function isEntry(value: unknown): value is HistoryEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  const count = (key: string): boolean => {
    const number = entry[key];
    return typeof number === 'number' && Number.isFinite(number) && number >= 0;
  };
  return (
    typeof entry.remote === 'string' &&
    typeof entry.local === 'string' &&
    typeof entry.reference === 'string' &&
    count('sessions') &&
    count('rx_bytes') &&
    count('tx_bytes')
  );
}
