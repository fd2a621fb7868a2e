/**
 * What an API worker reads of a request: the request line, the headers, the body's length, and
 * nothing it is unsure of. A request it frames becomes node's request object as it is
 * (socket-exchange.ts), so the scan stands in for node's parser (llhttp) and is deliberately
 * narrower than it: any head the two might frame or read differently (a second Content-Length,
 * Transfer-Encoding, a folded or bare-LF line, a byte outside the header grammar, a Connection
 * token other than keep-alive or close) and any head node's server answers without a handler (no
 * Host, Expect, Upgrade) is `unsure`, and the main process reads it from the first byte with its
 * own parser. So the two processes never disagree on where a request ends or what it says
 * (test/api-workers/request-head-differential.test.ts).
 */

/** A request whose bytes are all buffered and that a worker may answer. */
export interface ScannedRequest {
  readonly kind: 'request';
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  readonly minorVersion: 0 | 1;
  /** Bytes of the head, the empty line included. */
  readonly headLength: number;
  /** Bytes of the body (Content-Length; 0 without one). */
  readonly bodyLength: number;
  /** Lower-cased header names and their values (one of each: a repeated name is `unsure`). */
  readonly headers: ReadonlyMap<string, string>;
  /** Names as sent and their values, alternating, as node's `IncomingMessage.rawHeaders`. */
  readonly rawHeaders: string[];
}

/** The head is not complete yet: read more (it is shorter than the bound so far). */
export interface IncompleteHead {
  readonly kind: 'incomplete';
}

/** A head a worker does not frame itself: the main process takes the connection. */
export interface UnsureHead {
  readonly kind: 'unsure';
  readonly why: string;
}

export type HeadScan = ScannedRequest | IncompleteHead | UnsureHead;

/**
 * Longest head a worker frames; a longer one goes to the main process (whose bound applies). Half
 * of node's own bound (16 KiB), so that no head near it is framed here and refused there.
 */
export const MAX_SCANNED_HEAD_BYTES = 8 * 1024;
/** Most header lines a worker frames: node keeps only the first 2 000 of a head. */
const MAX_SCANNED_HEADERS = 500;

const HEAD_END = Buffer.from('\r\n\r\n');
const REQUEST_LINE = /^([A-Z]{1,16}) (\/[!-~]*) HTTP\/1\.([01])$/;
/** A header's name: an RFC 9110 token, right before the colon. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What follows the colon: visible characters, spaces and tabs (no obs-fold, no bare CR or LF). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers that change how the bytes after the head are framed or read: the main process's job. */
const FRAMING_HEADERS = new Set(['transfer-encoding', 'upgrade', 'expect', 'content-encoding']);

/** Scans the head at the start of `buffer` (latin1 view of the bytes, as llhttp reads them). */
export function scanRequestHead(buffer: Buffer): HeadScan {
  const end = buffer.indexOf(HEAD_END);
  if (end < 0) {
    return buffer.length >= MAX_SCANNED_HEAD_BYTES
      ? { kind: 'unsure', why: 'head too long' }
      : { kind: 'incomplete' };
  }
  if (end + HEAD_END.length > MAX_SCANNED_HEAD_BYTES) return { kind: 'unsure', why: 'head too long' };
  const lines = buffer.toString('latin1', 0, end).split('\r\n');
  if (lines.length > MAX_SCANNED_HEADERS + 1) return { kind: 'unsure', why: 'too many headers' };
  const requestLine = REQUEST_LINE.exec(lines[0] ?? '');
  if (requestLine === null) return { kind: 'unsure', why: 'request line' };
  const headers = new Map<string, string>();
  const rawHeaders: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon < 0) return { kind: 'unsure', why: 'header line' };
    const rawName = line.slice(0, colon);
    // Checked whole, then trimmed of its optional whitespace (a lazy pattern that trims as it
    // matches costs about a microsecond per bearer token).
    const rest = line.slice(colon + 1);
    if (!HEADER_NAME.test(rawName) || !HEADER_VALUE.test(rest)) return { kind: 'unsure', why: 'header line' };
    const value = trimOptionalWhitespace(rest);
    const name = rawName.toLowerCase();
    if (headers.has(name) || FRAMING_HEADERS.has(name)) return { kind: 'unsure', why: `header ${name}` };
    headers.set(name, value);
    rawHeaders.push(rawName, value);
  }
  // Node's server answers an HTTP/1.1 request without Host itself (400), before any handler.
  if (requestLine[3] === '1' && !headers.has('host')) return { kind: 'unsure', why: 'no host' };
  // Keep-alive or close, nothing else: other tokens (upgrade, a list) are llhttp's to read.
  const connection = headers.get('connection');
  if (connection !== undefined && !/^(?:keep-alive|close)$/i.test(connection))
    return { kind: 'unsure', why: 'connection' };
  const contentLength = headers.get('content-length');
  if (contentLength !== undefined && !/^\d{1,9}$/.test(contentLength))
    return { kind: 'unsure', why: 'content-length' };
  return {
    kind: 'request',
    method: requestLine[1]!,
    target: requestLine[2]!,
    minorVersion: requestLine[3] === '0' ? 0 : 1,
    headLength: end + HEAD_END.length,
    bodyLength: contentLength === undefined ? 0 : Number(contentLength),
    headers,
    rawHeaders,
  };
}

/** `value` without the spaces and tabs around it (RFC 9110's OWS, as llhttp drops them). */
function trimOptionalWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isSpaceOrTab(value.charCodeAt(start))) start++;
  while (end > start && isSpaceOrTab(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isSpaceOrTab(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
