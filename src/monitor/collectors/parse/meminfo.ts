/** What the memory collector needs from /proc/meminfo, bytes. */
export interface MemInfo {
  totalBytes: number;
  /** `MemAvailable`: what can be allocated without swapping (not the kernel's `MemFree`). */
  availableBytes: number;
}

/**
 * Parses /proc/meminfo (values in kB = KiB). Kernels before 3.14 have no `MemAvailable`; then
 * `MemFree + Buffers + Cached` approximates it. Throws when `MemTotal` is missing.
 */
export function parseMeminfo(text: string): MemInfo {
  const fields = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+(?:\(\w+\))?):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (match !== null) fields.set(match[1]!, Number(match[2]) * (line.trimEnd().endsWith('kB') ? 1024 : 1));
  }
  const totalBytes = fields.get('MemTotal');
  if (totalBytes === undefined) throw new Error('/proc/meminfo: no MemTotal line');
  const availableBytes =
    fields.get('MemAvailable') ??
    (fields.get('MemFree') ?? 0) + (fields.get('Buffers') ?? 0) + (fields.get('Cached') ?? 0);
  return { totalBytes, availableBytes };
}
