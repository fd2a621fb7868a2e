import type { ProcessEntry, ProcessService } from '../service/index.js';
import { sameElements } from './same-elements.js';
import { stateJson } from './state-json.js';
import { stateInput } from './views.js';

/**
 * The state of each process as the process list sends it: kept for up to a second of the service's
 * clock, and encoded again at once when something a client acts on changes (order, exec state,
 * pid, last log line, command line, the live source of an input with a fallback). What moves continuously (runtime, reconnect countdown,
 * ffmpeg's progress, CPU and memory) is then up to a second old in the list; its sources report
 * once a second anyway (ffmpeg's progress block, the usage sampler). With 200 processes encoding
 * every state on every request was most of the list's answer time, and nearly every state had
 * moved since the last request, so nothing short of a time bound lets the list be kept
 * (docs/performance.md#fifth-pass-the-list-answered-ahead-26-nov-2026-late). `GET /process/:id/state` stays exact.
 */
interface PublishedState {
  /** When it was encoded, by the service's clock, ms. */
  readonly atMs: number;
  readonly order: string;
  readonly exec: string;
  readonly pid: number | undefined;
  readonly lastLogLine: string;
  /** The switch's view object, the same until an input changes source. */
  readonly inputLive: object | undefined;
  readonly command: readonly string[];
  readonly bytes: Buffer;
}

const published = new WeakMap<ProcessEntry, PublishedState>();

/** How old a state in the list may be, ms. */
export const LIST_STATE_MAX_AGE_MS = 1000;

/**
 * The state's JSON as the list sends it now (see above): the kept one while younger than
 * `renewAfterMs` (a clock that went back counts as older) and nothing a client acts on changed.
 */
export function publishedStateBytes(
  service: ProcessService,
  entry: ProcessEntry,
  renewAfterMs = LIST_STATE_MAX_AGE_MS,
): Buffer {
  const now = service.now();
  const supervisor = entry.supervisor;
  const command = service.commandLine(entry);
  const kept = published.get(entry);
  if (
    kept !== undefined &&
    now >= kept.atMs &&
    now - kept.atMs < renewAfterMs &&
    kept.order === supervisor.order &&
    kept.exec === supervisor.state &&
    kept.pid === supervisor.pid &&
    kept.lastLogLine === entry.report.lastLogLine &&
    kept.inputLive === entry.liveInputs.view() &&
    // By value: the command lines of processes that read another process's output are built anew
    // on every call (they follow the other config).
    sameElements(kept.command, command)
  ) {
    return kept.bytes;
  }
  const input = stateInput(service, entry, now);
  const bytes = Buffer.from(stateJson(input));
  published.set(entry, {
    atMs: now,
    order: input.order,
    exec: input.state,
    pid: supervisor.pid,
    lastLogLine: input.lastLogLine,
    inputLive: input.inputLive,
    command,
    bytes,
  });
  return bytes;
}
