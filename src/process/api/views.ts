import { toProcess, toReport, toState, type ProcessPart } from './api-shapes.js';
import type { ProcessViewDto, ReportView, StateView } from './contract.js';
import type { ProcessEntry, ProcessService } from '../service/index.js';
import { stateJson } from './state-json.js';

/** `/state` of one process. */
function stateView(service: ProcessService, entry: ProcessEntry): StateView {
  return toState(stateInput(service, entry));
}

/** `JSON.stringify(stateView(service, entry))`, without the object graph (state-json.ts). */
export function stateViewJson(service: ProcessService, entry: ProcessEntry): string {
  return stateJson(stateInput(service, entry));
}

/** What the state of a process is made of, at `now`. */
export function stateInput(
  service: ProcessService,
  entry: ProcessEntry,
  now = service.now(),
): Parameters<typeof toState>[0] {
  const supervisor = entry.supervisor;
  const resources = supervisor.resources;
  return {
    order: supervisor.order,
    state: supervisor.state,
    stateSeconds: supervisor.stateSeconds(now),
    reconnectSeconds: supervisor.reconnectSeconds(now),
    lastLogLine: entry.report.lastLogLine,
    progress: supervisor.progress(now),
    memoryBytes: resources.rssBytes,
    cpuPercent: resources.cpuPercent,
    command: service.commandLine(entry),
    pid: supervisor.state === 'running' || supervisor.state === 'finishing' ? supervisor.pid : undefined,
    inputLive: entry.liveInputs.view(),
  };
}

/** `/report` of one process. */
export function reportView(entry: ProcessEntry): ReportView {
  return toReport(entry.report.currentRun(), entry.report.earlierRuns());
}

/** The process object with the parts in `parts`. */
export function processView(
  service: ProcessService,
  entry: ProcessEntry,
  parts: ReadonlySet<ProcessPart>,
): ProcessViewDto {
  return toProcess(entry, parts, {
    state: () => stateView(service, entry),
    report: () => reportView(entry),
    metadata: () => entry.metadata,
  });
}
