import type { ProcessIO } from './contract.js';

/** Which output of which process writes the memfs paths starting with `prefix`. */
export interface OutputPrefix {
  processId: string;
  /** Index of the output file in the process config. */
  output: number;
  prefix: string;
}

/**
 * The memfs path prefixes a resolved output writes: from its address and from option values
 * (e.g. `-hls_segment_filename`) under the memfs base URL. `{memfs}/cam1.m3u8` and
 * `{memfs}/cam1_%04d.ts` both give `/cam1`… prefixes: the file name up to its first `.` or `%`,
 * which also covers the segment names ffmpeg derives from a playlist name.
 */
export function memfsPrefixes(output: ProcessIO, memfsBase: string): string[] {
  const base = withoutUserInfo(memfsBase);
  const prefixes = new Set<string>();
  for (const value of [output.address, ...output.options]) {
    const url = withoutUserInfo(value);
    if (!url.startsWith(`${base}/`)) continue;
    const path = url.slice(base.length).split('?')[0] as string;
    const slash = path.lastIndexOf('/');
    const name = path.slice(slash + 1);
    const cut = name.search(/[.%]/);
    const prefix = path.slice(0, slash + 1) + (cut === -1 ? name : name.slice(0, cut));
    if (prefix !== '/') prefixes.add(prefix);
  }
  return [...prefixes];
}

export function withoutUserInfo(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/@]*@/, '$1');
}

/** Finds the output a memfs write belongs to: the longest matching prefix wins. */
export class OutputPrefixIndex {
  private entries: OutputPrefix[] = [];

  replace(entries: OutputPrefix[]): void {
    this.entries = [...entries].sort((a, b) => b.prefix.length - a.prefix.length);
  }

  find(path: string): OutputPrefix | undefined {
    return this.entries.find((entry) => path.startsWith(entry.prefix));
  }
}
