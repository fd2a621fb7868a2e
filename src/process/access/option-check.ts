import { MAX_DEPTH, type AccessContext, type Checks, type Findings } from './context.js';
import { checkFiltergraph, stripQuoting } from './filtergraph.js';
import { pathRefusal } from './local-path.js';
import { networkRefusal } from './network-target.js';
import { readBooleanOption } from './option-value.js';
import { variantNamesRefusal } from './variant-names.js';
import {
  FILE_OPTIONS,
  FILTERGRAPH_OPTIONS,
  FLAG_OPTIONS,
  GUARDED_BOOLEANS,
  LOCAL_PROTOCOLS,
  NETWORK_PROTOCOLS,
  REFUSED_OPTIONS,
  SERVER_OPTIONS,
  TEXT_OPTIONS,
} from './option-table.js';

const URL_IN_TEXT = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s|;,[\]()]*/g;
const LOCAL_PROTOCOL_IN_TEXT = new RegExp(
  `(?:^|[^A-Za-z0-9+.-])(${LOCAL_PROTOCOLS.join('|')})(?:[+:]|,(?=[a-z,]))`,
  'i',
);
const PIECE_SEPARATORS = /[\s:,=|;()[\]]+/;
/** Where a network address inside a value may start: a protocol name not preceded by one's characters. */
const NETWORK_URL_START = new RegExp(`(?<![A-Za-z0-9+.-])(${[...NETWORK_PROTOCOLS].join('|')}):`, 'gi');
/** Characters that end an address inside a filtergraph or an option list. */
const VALUE_SEPARATORS = /[\s|;,()[\]]/;

/**
 * Walks one options list the way ffmpeg's parser does: a token starting with `-` is an option,
 * which takes the next token as its value unless it is a flag; any other token would be taken
 * by ffmpeg as an output address and is refused. Returns the last `-f` seen (the format of the
 * input or output the list belongs to).
 */
export function checkOptions(
  tokens: readonly string[],
  where: string,
  findings: Findings,
  checks: Checks,
): string | undefined {
  let format: string | undefined;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index] as string;
    const at = `${where}[${index}]`;
    if (token === '--') {
      findings.refuse(at, `"--" makes ffmpeg read every later token as an output address`);
      continue;
    }
    if (!token.startsWith('-') || token.length < 2) {
      findings.refuse(
        at,
        `"${token}" is neither an option nor an option's value; ffmpeg would write it as an output`,
      );
      continue;
    }
    const name = token.slice(1);
    const base = name.split(':')[0] as string;
    const refused = REFUSED_OPTIONS.get(base);
    if (refused !== undefined) findings.refuse(at, `"${token}" is not allowed: it ${refused}`);
    if (FLAG_OPTIONS.has(base) || (base.startsWith('no') && FLAG_OPTIONS.has(base.slice(2)))) {
      if (SERVER_OPTIONS.has(base))
        findings.refuse(at, `"${token}" is set by the server and cannot be overridden`);
      continue;
    }
    const value = tokens[index + 1];
    index++;
    if (value === undefined) break;
    const valueAt = `${where}[${index}]`;
    if (base.startsWith('/')) {
      findings.refuse(
        at,
        `"${token}" reads the value of -${base.slice(1)} from a file the policy cannot check`,
      );
    } else if (SERVER_OPTIONS.has(base)) {
      findings.refuse(at, `"${token}" is set by the server and cannot be overridden`);
    } else if (base === 'f') {
      format = value;
    } else if (GUARDED_BOOLEANS.has(base)) {
      const reason = guardedBooleanRefusal(base, value);
      if (reason !== undefined) findings.refuse(at, reason);
    } else {
      checkOptionValue(base, value, format, valueAt, findings, checks);
    }
  }
  return format;
}

function checkOptionValue(
  option: string,
  value: string,
  format: string | undefined,
  where: string,
  findings: Findings,
  checks: Checks,
): void {
  const use = FILE_OPTIONS.get(option);
  const named = `${where} (-${option})`;
  switch (use) {
    case 'input-address':
      return checks.address(value, 'input', format, named, 0);
    case 'read':
      return checks.address(value, 'input', undefined, named, 0);
    case 'write':
      return checks.address(value, 'output', undefined, named, 0);
    case 'sibling-name':
      if (value.includes('/') || value.includes('\\') || value === '..') {
        findings.refuse(named, `"${value}" must be a plain file name (it is placed beside the output)`);
      }
      return;
    case 'variant-names': {
      const reason = variantNamesRefusal(value);
      return reason === undefined ? undefined : findings.refuse(named, reason);
    }
    case 'unreadable':
      return findings.refuse(
        named,
        `-${option} names a file whose contents the policy cannot check; give them inline`,
      );
    case undefined:
      break;
  }
  if (TEXT_OPTIONS.has(option)) return;
  if (FILTERGRAPH_OPTIONS.has(option)) return checkFiltergraph(value, named, 0, findings, checks);
  if (
    option.endsWith('_options') ||
    option.endsWith('_opts') ||
    option.endsWith('-params') ||
    option.endsWith('opts')
  ) {
    return checks.optionList(value, named, 0);
  }
  checks.value(value, named, 0);
}

/**
 * Why the value of a guarded boolean option (GUARDED_BOOLEANS) is refused: it reads, the way
 * ffmpeg reads it, as another value than the required one, or as none (ffmpeg would refuse it
 * too; refused here so that a reader that differs from ffmpeg's errs on the safe side).
 */
function guardedBooleanRefusal(option: string, value: string): string | undefined {
  const guard = GUARDED_BOOLEANS.get(option);
  if (guard === undefined) return undefined;
  const read = readBooleanOption(value);
  if (read === guard.required) return undefined;
  const as = read === undefined ? 'is not a boolean ffmpeg reads' : `reads as ${read}`;
  return `"-${option} ${value}" ${as}: only a value that ffmpeg reads as ${guard.required} is allowed (${guard.because})`;
}

/**
 * `k=v:k=v` lists: each key is looked up like a command-line option (tee slave options can set
 * `hls_segment_filename`), each value is scanned.
 */
export function checkOptionList(
  text: string,
  where: string,
  depth: number,
  findings: Findings,
  checks: Checks,
): void {
  if (depth > MAX_DEPTH) return findings.refuse(where, `options nest more than ${MAX_DEPTH} deep`);
  for (const pair of splitUnescaped(text, ':')) {
    const equals = pair.indexOf('=');
    const key = (equals < 0 ? pair : pair.slice(0, equals)).trim().replace(/^-/, '');
    const value = equals < 0 ? '' : pair.slice(equals + 1);
    if (SERVER_OPTIONS.has(key)) {
      findings.refuse(where, `"${key}" is set by the server and cannot be overridden`);
      continue;
    }
    if (GUARDED_BOOLEANS.has(key)) {
      const reason = guardedBooleanRefusal(key, stripQuoting(value));
      if (reason !== undefined) findings.refuse(where, reason);
      continue;
    }
    const use = FILE_OPTIONS.get(key);
    if (use === 'write')
      checks.address(stripQuoting(value), 'output', undefined, `${where} (${key})`, depth + 1);
    else if (use === 'read')
      checks.address(stripQuoting(value), 'input', undefined, `${where} (${key})`, depth + 1);
    else if (use === 'unreadable')
      findings.refuse(where, `"${key}" names a file whose contents the policy cannot check`);
    else if (use === 'sibling-name' && /[/\\]/.test(value))
      findings.refuse(where, `"${key}" must be a plain file name`);
    else if (use === 'variant-names') {
      const reason = variantNamesRefusal(stripQuoting(value));
      if (reason !== undefined) findings.refuse(`${where} (${key})`, reason);
    }
  }
  checks.value(text, where, depth);
}

/**
 * Finds what a free-form value could open: URLs (their host is checked), local protocol names
 * (refused: the policy cannot follow them inside a value), and path-like pieces (absolute, or with
 * a `..` segment) that must lie where both inputs and outputs may.
 */
export function checkValue(raw: string, where: string, context: AccessContext, findings: Findings): void {
  let text = stripQuoting(raw);
  for (const reason of new Set([...networkRefusals(raw, context), ...networkRefusals(text, context)])) {
    findings.refuse(where, reason);
  }
  for (const match of text.matchAll(URL_IN_TEXT)) {
    const scheme = match[0].slice(0, match[0].indexOf(':')).toLowerCase();
    if (!NETWORK_PROTOCOLS.has(scheme)) {
      findings.refuse(where, `"${match[0]}": protocol "${scheme}" is not allowed inside an option value`);
    }
  }
  text = text.replace(URL_IN_TEXT, ' ');
  const local = LOCAL_PROTOCOL_IN_TEXT.exec(text);
  if (local !== null) {
    findings.refuse(
      where,
      `"${raw}" names the ${local[1] as string} protocol, which is not allowed inside an option value`,
    );
  }
  for (const piece of text.split(PIECE_SEPARATORS)) {
    if (!piece.startsWith('/') && !piece.split('/').includes('..')) continue;
    const reason = pathRefusal(piece, 'output', context) ?? pathRefusal(piece, 'input', context);
    if (reason !== undefined) findings.refuse(where, reason);
  }
}

/**
 * The host check for every network address that starts somewhere in `text` (`http:` with or
 * without slashes, as ffmpeg reads it). Where such an address ends depends on who reads the value
 * (a filter stops at `,` or `[`, an option takes it whole), so each is checked up to the next
 * separator, up to the next white space, and up to the end; the first refusal is reported.
 */
function networkRefusals(text: string, context: AccessContext): string[] {
  const reasons: string[] = [];
  for (const match of text.matchAll(NETWORK_URL_START)) {
    const whole = text.slice(match.index);
    const scheme = (match[1] as string).toLowerCase();
    const forms = new Set([
      whole.split(VALUE_SEPARATORS)[0] as string,
      whole.split(/\s/)[0] as string,
      whole,
    ]);
    const reason = [...forms]
      .map((form) => networkRefusal(form, scheme, context.own))
      .find((found) => found !== undefined);
    if (reason !== undefined) reasons.push(reason);
  }
  return reasons;
}

/** Splits on `separator` where it is not escaped by a backslash or inside single quotes. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (char === '\\' && index + 1 < text.length) {
      current += char + (text[index + 1] as string);
      index++;
    } else if (char === "'") {
      quoted = !quoted;
      current += char;
    } else if (char === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}
