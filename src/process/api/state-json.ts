import type { ProgressValues, StreamValues } from '../progress/index.js';
import { round3, type toState } from './api-shapes.js';

/**
 * `JSON.stringify(toState(input))`, written directly: the same keys in the same order, the same
 * number formatting, a key left out where `JSON.stringify` leaves it out (value `undefined`). The
 * process list encodes the state of every process on every request (it moves every second); the
 * object graph of `toState` and its generic serialization were most of that answer's time with a
 * few hundred processes (docs/performance.md#a-full-server). A randomized test compares the two.
 */
export function stateJson(input: Parameters<typeof toState>[0]): string {
  let progress = progressTexts.get(input.progress);
  if (progress === undefined) {
    progress = progressJson(input.progress);
    progressTexts.set(input.progress, progress);
  }
  let command = commandTexts.get(input.command);
  if (command === undefined) {
    command = JSON.stringify(input.command);
    commandTexts.set(input.command, command);
  }
  return (
    `{"order":${json(input.order)},"exec":${json(input.state)}` +
    `,"runtime_seconds":${num(Math.floor(input.stateSeconds))}` +
    `,"reconnect_seconds":${num(input.reconnectSeconds)}` +
    `,"last_logline":${json(input.lastLogLine)}` +
    `,"progress":${progress}` +
    `,"memory_bytes":${num(Math.round(input.memoryBytes))}` +
    `,"cpu_usage":${num(round3(input.cpuPercent))}` +
    `,"command":${command},"pid":${num(input.pid ?? 0)}` +
    (input.inputLive === undefined ? '' : `,"input_live":${JSON.stringify(input.inputLive)}`) +
    '}'
  );
}

/**
 * Encoded progress values and command lines, by object: a tracker hands out the same values object
 * until they change (ProgressTracker.values), the service the same command array until the config
 * does (ProcessService.commandLine, kept by EntryFactory.userCommand); neither is modified once
 * handed out.
 */
const progressTexts = new WeakMap<ProgressValues, string>();
const commandTexts = new WeakMap<readonly string[], string>();

/** `JSON.stringify(toProgress(progress))`. */
function progressJson(progress: ProgressValues): string {
  let inputs = '';
  for (const stream of progress.inputs) inputs += (inputs === '' ? '' : ',') + streamJson(stream, false);
  let outputs = '';
  for (const stream of progress.outputs) outputs += (outputs === '' ? '' : ',') + streamJson(stream, true);
  return (
    `{"inputs":[${inputs}],"outputs":[${outputs}]` +
    `,"frame":${num(progress.frame)},"packet":${num(progress.packet)}` +
    `,"fps":${num(round3(progress.fps))},"q":${num(round3(progress.q))}` +
    `,"size_kb":${num(Math.floor(progress.sizeBytes / 1024))},"time":${num(round3(progress.timeSeconds))}` +
    `,"bitrate_kbit":${num(round3(progress.bitrate / 1000))},"speed":${num(round3(progress.speed))}` +
    `,"drop":${num(progress.drop)},"dup":${num(progress.dup)}}`
  );
}

function streamJson(stream: StreamValues, output: boolean): string {
  const framerate = stream.framerate;
  let text =
    `{"id":${json(stream.id)},"address":${json(stream.address)}` +
    `,"index":${num(stream.index)},"stream":${num(stream.stream)}` +
    `,"format":${json(stream.format)},"type":${json(stream.type)}` +
    `,"codec":${json(stream.codec)},"coder":${json(stream.codec)}` +
    `,"frame":${num(stream.frame)},"keyframe":${num(stream.keyframe)}` +
    `,"framerate":{"min":${num(round3(framerate.min))},"max":${num(round3(framerate.max))},"avg":${num(round3(framerate.avg))}}` +
    `,"fps":${num(round3(stream.fps))},"packet":${num(stream.packet)},"pps":${num(round3(stream.pps))}` +
    `,"size_kb":${num(Math.floor(stream.sizeBytes / 1024))},"bitrate_kbit":${num(round3(stream.bitrate / 1000))}` +
    `,"extradata_size_bytes":${num(stream.extradataBytes)}`;
  if (output || stream.type === 'video') text += `,"q":${num(round3(stream.q))}`;
  if (stream.pixFmt !== undefined) text += `,"pix_fmt":${json(stream.pixFmt)}`;
  if (stream.width !== undefined) text += `,"width":${num(stream.width)}` + optional('height', stream.height);
  if (stream.samplingHz !== undefined) text += `,"sampling_hz":${num(stream.samplingHz)}`;
  if (stream.layout !== undefined)
    text += `,"layout":${json(stream.layout)}` + optional('channels', stream.channels);
  return `${text}}`;
}

/** A number as `JSON.stringify` writes it (`null` for NaN and the infinities). */
function num(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * A string as `JSON.stringify` writes it, kept by value: a state has about twenty strings (order,
 * state, last log line, each stream's id, address, format, type, codec…) that repeat from request
 * to request, and `JSON.stringify` of each was the largest JavaScript item of the list's state
 * encoding in a profile with 100 processes. Cleared when full, so changing log lines cannot grow it.
 */
function json(value: string): string {
  let text = jsonTexts.get(value);
  if (text === undefined) {
    if (jsonTexts.size >= MAX_KEPT_JSON_TEXTS) jsonTexts.clear();
    text = JSON.stringify(value);
    jsonTexts.set(value, text);
  }
  return text;
}

const MAX_KEPT_JSON_TEXTS = 4096;
const jsonTexts = new Map<string, string>();

/** `,"key":value`, or nothing when the value is `undefined` (as `JSON.stringify` leaves it out). */
function optional(key: string, value: number | undefined): string {
  return value === undefined ? '' : `,"${key}":${num(value)}`;
}
