import type { ProcessConfig } from '../config/index.js';
import type { ProcessEntry, ProcessService } from '../service/index.js';
import type { ProcessReport } from '../supervise/index.js';
import type { ProcessPart } from './api-shapes.js';
import { LIST_STATE_MAX_AGE_MS, publishedStateBytes } from './published-state.js';
import { reportView, stateViewJson } from './views.js';

/**
 * The wire bytes of process objects, the same bytes as `JSON.stringify(processView(…))`, built
 * from per-process fragments: a config and a report change far less often than they are asked for
 * (a UI polls the whole list every second), so each is encoded once per change and kept as UTF-8
 * bytes, the metadata likewise by its revision; the state (which moves every second) is encoded per
 * request for one process, and at most once a second for the list (published-state.ts). With 200
 * processes the list is about 1.4 MB, mostly reports: encoding it per request dominated the answer
 * time (docs/performance.md#a-full-server).
 */

/** Encoded configs: entries get a new config object on every update, so the object is the key. */
const configBytes = new WeakMap<ProcessConfig, Buffer>();
/** Encoded heads (id … updated_at, without the closing brace), with the times they were encoded with. */
const headBytes = new WeakMap<ProcessConfig, { createdAt: number; updatedAt: number; bytes: Buffer }>();
/** Encoded metadata with the revision they were encoded at (it is changed in place). */
const metadataBytes = new WeakMap<ProcessEntry, { revision: number; bytes: Buffer }>();
/** Encoded reports with the revision they were encoded at. */
const reportBytes = new WeakMap<ProcessReport, { revision: number; bytes: Buffer }>();

const OPEN_LIST = Buffer.from('[');
const CLOSE_LIST = Buffer.from(']');
const COMMA = Buffer.from(',');
const CLOSE_OBJECT = Buffer.from('}');
const CONFIG_KEY = Buffer.from(',"config":');
const STATE_KEY = Buffer.from(',"state":');
const REPORT_KEY = Buffer.from(',"report":');
const METADATA_KEY = Buffer.from(',"metadata":');

/**
 * An answer as pieces: encoded parts kept per process (Buffers) and the parts encoded per request
 * (strings, written as UTF-8 straight into the answer instead of each into a Buffer of its own).
 */
export class JsonPieces {
  /** The answer's length in bytes. */
  readonly length: number;

  /** Kept Buffers are the same objects until what they encode changes (list-answers.ts relies on it). */
  constructor(readonly pieces: readonly (Buffer | string)[]) {
    let length = 0;
    for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
    this.length = length;
  }

  /** The answer written at the start of `target` (at least `length` bytes), as a view of it. */
  writeTo(target: Buffer): Buffer {
    let offset = 0;
    for (const piece of this.pieces) {
      if (typeof piece === 'string') {
        offset += target.write(piece, offset);
      } else {
        target.set(piece, offset);
        offset += piece.length;
      }
    }
    return target.subarray(0, offset);
  }

  /** The answer in a Buffer of its own. */
  toBuffer(): Buffer {
    return this.writeTo(Buffer.allocUnsafe(this.length));
  }
}

/** The JSON array of the process objects of `entries`, each with the parts in `parts` (states as published). */
export function processListBytes(
  service: ProcessService,
  entries: readonly ProcessEntry[],
  parts: ReadonlySet<ProcessPart>,
): Buffer {
  return processListPieces(service, entries, parts).toBuffer();
}

/**
 * `processListBytes` as pieces, to be written where the caller wants them; states older than
 * `renewStatesAfterMs` are encoded anew (published-state.ts).
 */
export function processListPieces(
  service: ProcessService,
  entries: readonly ProcessEntry[],
  parts: ReadonlySet<ProcessPart>,
  renewStatesAfterMs = LIST_STATE_MAX_AGE_MS,
): JsonPieces {
  const pieces: (Buffer | string)[] = [OPEN_LIST];
  const stateOf = (of: ProcessService, entry: ProcessEntry): Buffer =>
    publishedStateBytes(of, entry, renewStatesAfterMs);
  for (const [index, entry] of entries.entries()) {
    if (index > 0) pieces.push(COMMA);
    pushProcess(pieces, service, entry, parts, stateOf);
  }
  pieces.push(CLOSE_LIST);
  return new JsonPieces(pieces);
}

/** One process object with the parts in `parts`. */
export function processBytes(
  service: ProcessService,
  entry: ProcessEntry,
  parts: ReadonlySet<ProcessPart>,
): Buffer {
  const pieces: (Buffer | string)[] = [];
  pushProcess(pieces, service, entry, parts, stateViewJson);
  return new JsonPieces(pieces).toBuffer();
}

/** The `/report` of one process. */
export function reportBytesOf(entry: ProcessEntry): Buffer {
  const report = entry.report;
  const cached = reportBytes.get(report);
  if (cached !== undefined && cached.revision === report.revision) return cached.bytes;
  const bytes = Buffer.from(JSON.stringify(reportView(entry)));
  reportBytes.set(report, { revision: report.revision, bytes });
  return bytes;
}

/** The `/config` of one process. */
export function configBytesOf(entry: ProcessEntry): Buffer {
  let bytes = configBytes.get(entry.config);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(entry.config));
    configBytes.set(entry.config, bytes);
  }
  return bytes;
}

/**
 * The metadata of one process. A UI keeps kilobytes per process there (the Restreamer UI its whole
 * form), which the list encoded for every process on every request before it could even tell
 * whether its kept answer still held.
 */
function metadataBytesOf(entry: ProcessEntry): Buffer {
  const cached = metadataBytes.get(entry);
  if (cached !== undefined && cached.revision === entry.metadataRevision) return cached.bytes;
  const bytes = Buffer.from(JSON.stringify(entry.metadata));
  metadataBytes.set(entry, { revision: entry.metadataRevision, bytes });
  return bytes;
}

/** `{"id":…,"updated_at":…` of one process object (key order as `toProcess`). */
function headBytesOf(entry: ProcessEntry): Buffer {
  const cached = headBytes.get(entry.config);
  if (cached !== undefined && cached.createdAt === entry.createdAt && cached.updatedAt === entry.updatedAt) {
    return cached.bytes;
  }
  const head = JSON.stringify({
    id: entry.config.id,
    type: 'ffmpeg',
    reference: entry.config.reference,
    created_at: entry.createdAt,
    updated_at: entry.updatedAt,
  });
  const bytes = Buffer.from(head.slice(0, -1));
  headBytes.set(entry.config, { createdAt: entry.createdAt, updatedAt: entry.updatedAt, bytes });
  return bytes;
}

/** Key order as `toProcess`: id, type, reference, created_at, updated_at, then the parts. */
function pushProcess(
  chunks: (Buffer | string)[],
  service: ProcessService,
  entry: ProcessEntry,
  parts: ReadonlySet<ProcessPart>,
  stateOf: (service: ProcessService, entry: ProcessEntry) => Buffer | string,
): void {
  chunks.push(headBytesOf(entry));
  if (parts.has('config')) chunks.push(CONFIG_KEY, configBytesOf(entry));
  if (parts.has('state')) chunks.push(STATE_KEY, stateOf(service, entry));
  if (parts.has('report')) chunks.push(REPORT_KEY, reportBytesOf(entry));
  if (parts.has('metadata')) chunks.push(METADATA_KEY, metadataBytesOf(entry));
  chunks.push(CLOSE_OBJECT);
}
