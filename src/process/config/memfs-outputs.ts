import { FILE_OPTIONS } from '../access/index.js';
import type { ProcessConfig, ProcessIO } from './contract.js';

/** Which output of which process writes the memfs paths starting with `prefix`. */
export interface OutputPrefix {
  processId: string;
  /** Index of the output file in the process config. */
  output: number;
  prefix: string;
}

/**
 * The memfs path prefixes a resolved output writes: from its address and from option values
 * (e.g. `-hls_segment_filename`, or the slaves of a `tee` address) under the memfs base URL, and
 * from the names ffmpeg places beside the address (`-master_pl_name`, fMP4 init segments, DASH
 * segments). `{memfs}/cam1.m3u8` and `{memfs}/cam1_%04d.ts` both give `/cam1`… prefixes: the
 * path up to the file name's first `.`, `%` or `$` (or up to a directory's first `%`), which
 * also covers the segment names ffmpeg derives from a playlist name. A prefix of `/` alone (a
 * name that starts with `%v`, say) is left out: it would be the whole memory filesystem.
 * These prefixes scope what an encoder run may write (its memfs grant) and attribute the bytes
 * written to the output.
 */
export function memfsPrefixes(output: ProcessIO, memfsBase: string): string[] {
  const base = withoutUserInfo(memfsBase);
  const prefixes = new Set<string>();
  const addressDirs = new Set<string>();
  for (const value of [output.address, ...output.options]) {
    for (const path of memfsPathsIn(value, base)) {
      const slash = path.lastIndexOf('/');
      addPrefix(prefixes, path.slice(0, slash + 1), path.slice(slash + 1));
      if (value === output.address) addressDirs.add(path.slice(0, slash + 1));
    }
  }
  for (const name of namesBeside(output)) for (const dir of addressDirs) addPrefix(prefixes, dir, name);
  return [...prefixes];
}

function addPrefix(prefixes: Set<string>, dir: string, name: string): void {
  const prefix = fixedStart(dir, name);
  if (prefix !== '/') prefixes.add(prefix);
}

/** The part of `dir` + `name` before anything ffmpeg fills in (`%…`, `$…$`) or an extension. */
function fixedStart(dir: string, name: string): string {
  const dirCut = dir.indexOf('%');
  const nameCut = name.search(/[.%$]/);
  return dirCut !== -1 ? dir.slice(0, dirCut) : dir + (nameCut === -1 ? name : name.slice(0, nameCut));
}

/**
 * Every memfs path in the outputs of a resolved config that no encoder credential could cover:
 * one without a fixed start (`{memfs}/%v.m3u8`, `{memfs}/%d.ts`), as
 * `output[i].address: <reason>` or `output[i].options[j]: <reason>`. Its encoder would be refused
 * every write (the prefix would be `/`, the whole memory filesystem).
 */
export function memfsPathProblems(config: ProcessConfig, memfsBase: string): string[] {
  const base = withoutUserInfo(memfsBase);
  const problems: string[] = [];
  config.output.forEach((output, index) => {
    [output.address, ...output.options].forEach((value, at) => {
      for (const path of memfsPathsIn(value, base)) {
        const slash = path.lastIndexOf('/');
        if (fixedStart(path.slice(0, slash + 1), path.slice(slash + 1)) !== '/') continue;
        const where = at === 0 ? `output[${index}].address` : `output[${index}].options[${at - 1}]`;
        problems.push(
          `${where}: memfs path "${path}" has no fixed start; an encoder may write only under the fixed start of its memfs names (give the name a fixed part or a directory)`,
        );
      }
    });
  });
  return problems;
}

/** User info anywhere in a text (`withoutUserInfo` only looks at its start). */
const USER_INFO_IN_TEXT = /([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/@\s|[\]]*@/g;

/**
 * The memfs paths a value names: every memfs URL in it, so also the slaves of a `tee` address and
 * their options (`[f=hls:hls_segment_filename=http\://…]http\://…|…`, as `{memfs^:}` gives it),
 * each up to a `|`, `]`, `:`, `?` or blank.
 */
function memfsPathsIn(value: string, base: string): string[] {
  const text = value.replace(/\\(.)/g, '$1').replace(USER_INFO_IN_TEXT, '$1');
  const start = `${base}/`;
  const paths: string[] = [];
  for (let at = text.indexOf(start); at !== -1; at = text.indexOf(start, at + start.length)) {
    const rest = text.slice(at + base.length);
    const end = rest.search(/[|\]:?\s]/);
    paths.push(end === -1 ? rest : rest.slice(0, end));
  }
  return paths;
}

/** Options whose value is a file name ffmpeg writes beside the output (the access policy's list). */
const NAME_OPTIONS: readonly string[] = [...FILE_OPTIONS].flatMap(([name, use]) =>
  use === 'sibling-name' ? [name] : [],
);

/**
 * The file names ffmpeg writes beside an output address without it being named there: the values
 * of the name options, and the defaults of the HLS fMP4 init segment and of DASH (whose segments
 * and HLS playlists are named `init-stream…`, `chunk-stream…`, `master.m3u8`, `media_…`).
 */
function namesBeside(output: ProcessIO): string[] {
  const names: string[] = [];
  let format: string | undefined;
  for (let index = 0; index + 1 < output.options.length; index++) {
    const option = (output.options[index] as string).replace(/^-/, '');
    const value = output.options[index + 1] as string;
    if (NAME_OPTIONS.includes(option)) names.push(value);
    if (option === 'f') format = value;
    if (option === 'hls_segment_type' && value === 'fmp4') names.push('init.mp4');
  }
  if (format === 'dash' || (format === undefined && /\.mpd(\?|$)/.test(output.address))) {
    names.push('init-stream', 'chunk-stream', 'master.m3u8', 'media_');
  }
  return names;
}

export function withoutUserInfo(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/@]*@/, '$1');
}

/** `url` with `username:password@` as its user info (URL-encoded), replacing any it had. */
export function withUserInfo(url: string, credentials: { username: string; password: string }): string {
  const userInfo = `${encodeURIComponent(credentials.username)}:${encodeURIComponent(credentials.password)}`;
  return withoutUserInfo(url).replace('://', `://${userInfo}@`);
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
