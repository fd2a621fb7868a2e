import { MAX_DEPTH, type AccessContext, type Checks, type Findings } from './context.js';
import { checkFiltergraph } from './filtergraph.js';
import { pathRefusal, ruleRefusal } from './local-path.js';
import { networkRefusal } from './network-target.js';
import { DEVICE_FORMATS, NETWORK_PROTOCOLS } from './option-table.js';
import { formatNameOf } from './option-value.js';
import type { Direction } from './rules.js';

/** ffmpeg's URL_SCHEME_CHARS (libavformat/url.h): a protocol name is the longest run of these. */
const SCHEME_RUN = /^[A-Za-z0-9+.-]*/;
/** tee muxer slave options: `[k=v:k=v]` in front of a slave address. */
const TEE_OPTIONS = /^\[([^\]]*)\]/;

/**
 * Checks one address (and every address nested in it) as ffmpeg would open it: a tee muxer's
 * slaves, protocol wrappers (`tee:`, `crypto:`/`crypto+`, `cache:`, `async:`, `md5:`, `subfile,…:`,
 * `concat:`), `file:` and bare paths, `pipe:`/`fd:`, and network URLs. `format` is the `-f` given
 * for it, if any (`lavfi` makes the address a filtergraph, a device format a device).
 */
export function checkAddress(
  address: string,
  direction: Direction,
  format: string | undefined,
  where: string,
  depth: number,
  context: AccessContext,
  findings: Findings,
  checks: Checks,
): void {
  const refuse = (reason: string | undefined): void => {
    if (reason !== undefined) findings.refuse(where, reason);
  };
  if (depth > MAX_DEPTH) return refuse(`"${address}" nests addresses more than ${MAX_DEPTH} deep`);
  const lowerFormat = format === undefined ? undefined : formatNameOf(format);
  if (lowerFormat === 'lavfi' && direction === 'input') {
    refuse(ruleRefusal([address], direction, context));
    return checkFiltergraph(address, where, depth, findings, checks);
  }
  if (lowerFormat !== undefined && DEVICE_FORMATS.has(lowerFormat)) {
    if (!context.rules.devices.has(lowerFormat)) {
      return refuse(`format "${format}" opens a device; list it in ffmpeg.access.devices to allow it`);
    }
    return refuse(ruleRefusal([address], direction, context));
  }
  if (direction === 'output' && (address.includes('|') || address.startsWith('['))) {
    // The tee muxer's `[opts]slave|[opts]slave` (reference: restream.validateOutputAddress). Without
    // `-f tee` ffmpeg writes one file of that name, so that reading is checked as well.
    for (const slave of address.split('|')) {
      const options = TEE_OPTIONS.exec(slave);
      if (options !== null) checks.optionList(options[1] as string, `${where} (tee options)`, depth + 1);
      checks.address(slave.replace(TEE_OPTIONS, ''), 'output', undefined, where, depth + 1);
    }
    if (lowerFormat === 'tee') return;
  }
  const scheme = schemeOf(address);
  if (scheme === undefined) {
    if (address === '-') return refuse(ruleRefusal([address], direction, context));
    if (address === '') return refuse('an empty address');
    return refuse(pathRefusal(address, direction, context));
  }
  refuse(ruleRefusal([address], direction, context));
  const name = scheme.toLowerCase();
  const outer = name.split('+')[0] as string;
  const rest = address.slice(scheme.length + 1);
  const nested = name.includes('+') ? address.slice(outer.length + 1) : rest;
  const inner = (next: string, nextDirection: Direction = direction): void =>
    checks.address(next, nextDirection, undefined, where, depth + 1);
  switch (outer) {
    case 'file':
      return refuse(pathRefusal(rest, direction, context));
    case 'tee':
      if (direction === 'input') return refuse(`"${address}": tee: only writes`);
      return rest.split('|').forEach((part) => inner(part.replace(TEE_OPTIONS, '')));
    case 'concat':
      if (direction === 'output') return refuse(`"${address}": concat: only reads`);
      return rest.split('|').forEach((part) => inner(part));
    case 'crypto':
    case 'cache':
    case 'async':
      return inner(nested);
    case 'hls':
      if (direction === 'output') return refuse(`"${address}": hls: only reads`);
      return inner(nested);
    case 'subfile': {
      if (direction === 'output') return refuse(`"${address}": subfile only reads`);
      const colon = address.indexOf(':');
      return inner(address.slice(colon + 1));
    }
    case 'md5':
      // `md5:` alone prints the hash on stdout (discarded); `md5:<url>` writes it there.
      if (direction === 'input') return refuse(`"${address}": md5: only writes`);
      return rest === '' ? undefined : inner(rest, 'output');
    case 'pipe':
      return refuse(pipeRefusal(address, rest, direction));
    case 'data':
      return direction === 'input' ? undefined : refuse(`"${address}": data: cannot be written`);
    case 'concatf':
      return refuse(`"${address}": concatf: reads its list of addresses from a file the policy cannot check`);
    case 'fd':
    case 'unix':
      return refuse(`"${address}": ${outer}: reaches the server's own descriptors or local sockets`);
    default:
      if (NETWORK_PROTOCOLS.has(outer) && !name.includes('+')) {
        return refuse(networkRefusal(address, outer, context.own));
      }
      return refuse(
        `"${address}": protocol "${scheme}" is not allowed (files inside the disk directory, {memfs} and network protocols are)`,
      );
  }
}

/**
 * The protocol ffmpeg would pick for an address (libavformat/avio.c `url_find_protocol`), or
 * undefined for a local path. `subfile,,start,…,:url` names its protocol before a comma.
 */
export function schemeOf(address: string): string | undefined {
  const run = SCHEME_RUN.exec(address)?.[0] ?? '';
  if (run !== '' && address[run.length] === ':') return run;
  if (address.startsWith('subfile,') && address.includes(':')) return 'subfile';
  return undefined;
}

/** stdin (discarded input) and stdout (discarded output) only: fd 2 is the log, fd 3 the progress stream. */
function pipeRefusal(address: string, rest: string, direction: Direction): string | undefined {
  const fd = rest === '' ? (direction === 'input' ? 0 : 1) : Number(rest);
  if ((direction === 'input' && fd === 0) || (direction === 'output' && fd === 1)) return undefined;
  return `"${address}": ${direction === 'input' ? 'inputs may read pipe:0' : 'outputs may write pipe:1'} only; the other descriptors carry the server's log and progress streams`;
}
