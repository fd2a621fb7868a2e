import type { ProcessConfig } from '../config/index.js';
import type { ProgressValues, StreamValues } from '../progress/index.js';
import type { RunLog, Order, ProcessState } from '../supervise/index.js';
import type { ProcessViewDto, ProgressView, ReportView, StateView, StreamView } from './contract.js';

/** Parts of a process object a client can ask for (`filter`). */
export const PROCESS_PARTS = ['config', 'state', 'report', 'metadata'] as const;
export type ProcessPart = (typeof PROCESS_PARTS)[number];

/** The wire form of a number: integral values stay integral, others get 3 decimals. */
export function round3(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Number.isInteger(value) ? value : Math.round(value * 1000) / 1000;
}

/** `/state` of docs/processes.md#routes-and-answers */
export function toState(input: {
  order: Order;
  state: ProcessState;
  stateSeconds: number;
  reconnectSeconds: number;
  lastLogLine: string;
  progress: ProgressValues;
  memoryBytes: number;
  cpuPercent: number;
  command: string[];
  pid: number | undefined;
  /** Which source feeds each input with a fallback; undefined without fallbacks. */
  inputLive: Readonly<Record<string, 'primary' | 'fallback'>> | undefined;
}): StateView {
  return {
    order: input.order,
    exec: input.state,
    runtime_seconds: Math.floor(input.stateSeconds),
    reconnect_seconds: input.reconnectSeconds,
    last_logline: input.lastLogLine,
    progress: toProgress(input.progress),
    memory_bytes: Math.round(input.memoryBytes),
    cpu_usage: round3(input.cpuPercent),
    command: input.command,
    pid: input.pid ?? 0,
    input_live: input.inputLive,
  };
}

export function toProgress(progress: ProgressValues): ProgressView {
  return {
    inputs: progress.inputs.map((stream) => toStream(stream, false)),
    outputs: progress.outputs.map((stream) => toStream(stream, true)),
    frame: progress.frame,
    packet: progress.packet,
    fps: round3(progress.fps),
    q: round3(progress.q),
    size_kb: Math.floor(progress.sizeBytes / 1024),
    time: round3(progress.timeSeconds),
    bitrate_kbit: round3(progress.bitrate / 1000),
    speed: round3(progress.speed),
    drop: progress.drop,
    dup: progress.dup,
  };
}

function toStream(stream: StreamValues, output: boolean): StreamView {
  return {
    id: stream.id,
    address: stream.address,
    index: stream.index,
    stream: stream.stream,
    format: stream.format,
    type: stream.type,
    codec: stream.codec,
    coder: stream.codec,
    frame: stream.frame,
    keyframe: stream.keyframe,
    framerate: {
      min: round3(stream.framerate.min),
      max: round3(stream.framerate.max),
      avg: round3(stream.framerate.avg),
    },
    fps: round3(stream.fps),
    packet: stream.packet,
    pps: round3(stream.pps),
    size_kb: Math.floor(stream.sizeBytes / 1024),
    bitrate_kbit: round3(stream.bitrate / 1000),
    extradata_size_bytes: stream.extradataBytes,
    ...(output || stream.type === 'video' ? { q: round3(stream.q) } : {}),
    ...(stream.pixFmt !== undefined ? { pix_fmt: stream.pixFmt } : {}),
    ...(stream.width !== undefined ? { width: stream.width, height: stream.height } : {}),
    ...(stream.samplingHz !== undefined ? { sampling_hz: stream.samplingHz } : {}),
    ...(stream.layout !== undefined ? { layout: stream.layout, channels: stream.channels } : {}),
  };
}

function toRunLog(run: RunLog) {
  return {
    created_at: run.createdAt,
    prelude: [...run.prelude],
    log: run.log.map(([seconds, line]) => [String(seconds), line] as [string, string]),
  };
}

/** `/report` of docs/processes.md#routes-and-answers */
export function toReport(current: RunLog, history: RunLog[]): ReportView {
  return {
    ...toRunLog(current),
    history: history.map((run) => ({
      ...toRunLog(run),
      exited_at: run.exitedAt ?? 0,
      exit_state: run.exitState ?? '',
    })),
  };
}

/** A process object with the requested parts (docs/processes.md#routes-and-answers). */
export function toProcess(
  base: { config: ProcessConfig; createdAt: number; updatedAt: number },
  parts: ReadonlySet<ProcessPart>,
  view: {
    state: () => StateView;
    report: () => ReportView;
    metadata: () => Record<string, unknown>;
  },
): ProcessViewDto {
  const result: ProcessViewDto = {
    id: base.config.id,
    type: 'ffmpeg',
    reference: base.config.reference,
    created_at: base.createdAt,
    updated_at: base.updatedAt,
  };
  if (parts.has('config')) result.config = base.config;
  if (parts.has('state')) result.state = view.state();
  if (parts.has('report')) result.report = view.report();
  if (parts.has('metadata')) result.metadata = view.metadata();
  return result;
}
