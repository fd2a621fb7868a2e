import type { RawLogLine } from './contract.js';

/**
 * One logged line in the terms of datarhei Core's log API: a time, a level, a component, a message
 * and the rest of the fields. Turns pino's JSON lines into the reference's two answers of
 * `GET /api/v3/log`: the console form (`ts=… level=INFO component="…" msg="…" key=value`, keys
 * sorted) and the raw form (the fields with `ts`, `component`, `message`).
 */
export interface LogEvent {
  /** Milliseconds since the epoch. */
  time: number;
  /** `ERROR`, `WARN`, `INFO`, `DEBUG`. */
  level: string;
  component: string;
  message: string;
  data: Record<string, unknown>;
}

const LEVELS: Record<number, string> = {
  10: 'DEBUG',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'ERROR',
};
/** pino's own bookkeeping, which the reference's events do not carry. */
const DROPPED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'v']);

/** Parses one pino line; a line that is not a JSON object becomes a plain message. */
export function parsePinoLine(line: string): LogEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { time: 0, level: 'INFO', component: '', message: line, data: {} };
  }
  const fields = parsed as Record<string, unknown>;
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (!DROPPED.has(key)) data[key] = value;
  return {
    time: typeof fields.time === 'number' ? fields.time : 0,
    level: LEVELS[typeof fields.level === 'number' ? fields.level : 30] ?? 'INFO',
    component: typeof fields.component === 'string' ? fields.component : 'streamcore',
    message: typeof fields.msg === 'string' ? fields.msg : '',
    data,
  };
}

/** The reference's console form (its `consoleFormatter` without colour). */
export function consoleLine(event: LogEvent): string {
  const ts = new Date(event.time).toISOString().replace(/\.\d{3}Z$/, 'Z');
  let line = `ts=${ts} level=${event.level} component=${JSON.stringify(event.component)}`;
  if (event.message !== '') line += ` msg=${JSON.stringify(event.message)}`;
  for (const key of Object.keys(event.data).sort()) line += ` ${key}=${JSON.stringify(event.data[key])}`;
  return line;
}

/** The reference's raw form: the fields, with `ts` (RFC 3339), `component`, `message`, and `level`. */
export function rawEvent(event: LogEvent): RawLogLine {
  const raw: RawLogLine = { ...event.data, ts: new Date(event.time).toISOString() };
  raw.component = event.component;
  raw.level = event.level;
  if (event.message !== '') raw.message = event.message;
  return raw;
}
