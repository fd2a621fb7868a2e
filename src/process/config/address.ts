import { isAbsolute, resolve, sep } from 'node:path';

/** A reference to another process's output as an input address: `#<processid>:output=<outputid>`. */
export interface OutputReference {
  processId: string;
  outputId: string;
}

const REFERENCE = /^#(.+):output=(.+)$/;

export function parseOutputReference(address: string): OutputReference | undefined {
  const match = REFERENCE.exec(address);
  return match === null ? undefined : { processId: match[1] as string, outputId: match[2] as string };
}

const PROTOCOL = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;

/**
 * The local files an output address writes to, made absolute against `baseDir`; `[]` for
 * `-` (stdout) and for network or pipe protocols. The tee muxer's `[opts]a|[opts]b` form is split
 * into its parts.
 */
export function outputFiles(address: string, baseDir: string): string[] {
  if (address.includes('|') || address.startsWith('[')) {
    return address.split('|').flatMap((part) => outputFiles(part.replace(/^\[[^\]]*\]/, ''), baseDir));
  }
  if (address === '-' || address === '') return [];
  const protocol = PROTOCOL.exec(address);
  if (protocol !== null) {
    if (protocol[1]?.toLowerCase() !== 'file') return [];
    const path = address.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    return [absolute(path, baseDir)];
  }
  return [absolute(address, baseDir)];
}

/** True when `path` is `root` or inside it (both absolute). */
export function isInside(path: string, root: string): boolean {
  const normalizedRoot = root.endsWith(sep) ? root.slice(0, -1) : root;
  return path === normalizedRoot || path.startsWith(normalizedRoot + sep);
}

/** `address` with a relative local file path made absolute against `baseDir` (what runs). */
export function absoluteOutputAddress(address: string, baseDir: string): string {
  if (
    address === '-' ||
    address === '' ||
    PROTOCOL.test(address) ||
    address.includes('|') ||
    address.startsWith('[')
  ) {
    return address;
  }
  return absolute(address, baseDir);
}

function absolute(path: string, baseDir: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(baseDir, path);
}
