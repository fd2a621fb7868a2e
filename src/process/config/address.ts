import { isAbsolute, resolve } from 'node:path';

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
