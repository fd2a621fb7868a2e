import type { ProcessEntry, ProcessService } from '../service/index.js';
import { stateJson } from './state-json.js';
import { stateInput } from './views.js';

/**
 * The state of each process as the process list sends it: encoded at most once per second of the
 * service's clock, and again at once when something a client acts on changes (order, exec state,
 * pid, last log line, command line). What moves continuously (runtime, reconnect countdown,
 * ffmpeg's progress, CPU and memory) is then up to a second old in the list; its sources report
 * once a second anyway (ffmpeg's progress block, the usage sampler). With 200 processes encoding
 * every state on every request was most of the list's answer time, and nearly every state had
 * moved since the last request, so nothing short of a time bound lets the list be kept
 * (docs/performance.md, "A full server", fifth pass). `GET /process/:id/state` stays exact.
 */
interface PublishedState {
  readonly second: number;
  readonly order: string;
  readonly exec: string;
  readonly pid: number | undefined;
  readonly lastLogLine: string;
  readonly command: readonly string[];
  readonly bytes: Buffer;
}

const published = new WeakMap<ProcessEntry, PublishedState>();

/** The state's JSON as the list sends it now (see above). */
export function publishedStateBytes(service: ProcessService, entry: ProcessEntry): Buffer {
  const now = service.now();
  const second = Math.floor(now / 1000);
  const supervisor = entry.supervisor;
  const command = service.commandLine(entry);
  const kept = published.get(entry);
  if (
    kept !== undefined &&
    kept.second === second &&
    kept.order === supervisor.order &&
    kept.exec === supervisor.state &&
    kept.pid === supervisor.pid &&
    kept.lastLogLine === entry.report.lastLogLine &&
    sameStrings(kept.command, command)
  ) {
    return kept.bytes;
  }
  const input = stateInput(service, entry, now);
  const bytes = Buffer.from(stateJson(input));
  published.set(entry, {
    second,
    order: input.order,
    exec: input.state,
    pid: supervisor.pid,
    lastLogLine: input.lastLogLine,
    command,
    bytes,
  });
  return bytes;
}

/**
 * Command lines of processes that read another process's output are built anew on every call (they
 * follow the other config), so they are compared by value, not by identity.
 */
function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
