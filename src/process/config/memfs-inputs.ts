import { withoutUserInfo } from './memfs-outputs.js';
import type { ProcessIO } from './contract.js';

/**
 * The request header that names the process input reading a memfs file, as Node gives it (lower
 * case). ffmpeg's http protocol sends `-headers` with every request, and its HLS demuxer passes
 * them on to the segment requests, so a playlist and its segments all carry it.
 */
export const INPUT_HEADER = 'x-streamcore-input';

/** Which input file of which process a memfs read belongs to. */
export interface InputRef {
  processId: string;
  /** Index of the input file in the process config. */
  input: number;
}

/** A process id that fits in a header value as is: visible ASCII, no `/` (ids never have one). */
const HEADER_SAFE_ID = /^[!-.0-~]{1,200}$/;
const HEADER_VALUE = /^([!-.0-~]{1,200})\/(0|[1-9][0-9]{0,3})$/;

/**
 * The input with `-headers "X-Streamcore-Input: <processid>/<index>"` added to its options when
 * its address is under the memfs base URL, so that the server can attribute its reads. An input
 * whose options already carry `-headers` is left as is (ffmpeg keeps only one `-headers`, and the
 * user's wins): its reads stay unmetered.
 */
export function withInputHeader(
  input: ProcessIO,
  index: number,
  processId: string,
  memfsBase: string,
): ProcessIO {
  const base = withoutUserInfo(memfsBase);
  if (!withoutUserInfo(input.address).startsWith(`${base}/`)) return input;
  if (input.options.includes('-headers') || !HEADER_SAFE_ID.test(processId)) return input;
  return {
    ...input,
    options: [...input.options, '-headers', `X-Streamcore-Input: ${processId}/${index}\r\n`],
  };
}

/** The input a header value names; anything not well-formed (or repeated) is undefined. */
export function parseInputHeader(value: string | string[] | undefined): InputRef | undefined {
  if (typeof value !== 'string') return undefined;
  const match = HEADER_VALUE.exec(value.trim());
  if (match === null) return undefined;
  return { processId: match[1] as string, input: Number(match[2]) };
}
