import { randomUUID } from 'node:crypto';

/** The alphabet of short UUIDs: base 57 without look-alikes (0, 1, I, O, l). */
const ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE = BigInt(ALPHABET.length);
/** Digits needed for 128 bits in base 57. */
const LENGTH = 22;

/** A random UUID written as 22 characters of the base-57 alphabet (docs/processes.md#process-config). */
export function shortUuid(uuid: string = randomUUID()): string {
  let value = BigInt(`0x${uuid.replaceAll('-', '')}`);
  let out = '';
  while (value > 0n) {
    out = (ALPHABET[Number(value % BASE)] as string) + out;
    value /= BASE;
  }
  return out.padStart(LENGTH, ALPHABET[0]);
}
