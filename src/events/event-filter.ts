import { RE2JS } from 're2js';
import type { EventFilterDto } from './contract.js';
import type { BusEvent } from './event-bus.js';

/**
 * One filter of a request body, in the reference's shape (datarhei Core `api.LogEventFilter`):
 * `event` names the component of a log line (or what happened, for the other types), the other
 * fields are regular expressions matched case-insensitively; `type` (ours) names the kind.
 */
export type EventFilterSpec = EventFilterDto;

export type EventPredicate = (event: BusEvent) => boolean;

/** A filter's problem, named by its place in the body (`filters[2].data.id: …`). */
export class FilterError extends Error {}

/** The log levels as the reference numbers them in its events (`level`), by name. */
export const LEVEL_NAMES: Readonly<Record<number, string>> = { 1: 'ERROR', 2: 'WARN', 3: 'INFO', 4: 'DEBUG' };

const REGEX_FIELDS = ['message', 'level', 'caller', 'core_id'] as const;

/**
 * The predicate of a list of filters: an event passes when there are none, or when it matches any
 * one of them (each filter's fields all match). Expressions are RE2 (linear time): a client's
 * pattern runs on every event in the server's own thread and must not be able to stall it.
 */
export function compileFilters(filters: readonly EventFilterSpec[]): EventPredicate {
  if (filters.length === 0) return () => true;
  const compiled = filters.map((filter, index) => compileOne(filter, `filters[${index}]`));
  return (event) => compiled.some((matches) => matches(event));
}

function compileOne(filter: EventFilterSpec, where: string): EventPredicate {
  const type = filter.type?.toLowerCase() ?? '';
  const name = filter.event?.toLowerCase() ?? '';
  const patterns: [string, RE2JS][] = [];
  for (const field of REGEX_FIELDS) {
    const text = filter[field];
    if (text !== undefined && text !== '') patterns.push([field, compilePattern(text, `${where}.${field}`)]);
  }
  const data: [string, RE2JS][] = Object.entries(filter.data ?? {}).map(([key, text]) => [
    key,
    compilePattern(text, `${where}.data.${key}`),
  ]);
  return (event) => {
    if (type !== '' && event.type !== type) return false;
    if (name !== '' && event.event.toLowerCase() !== name) return false;
    for (const [field, pattern] of patterns) {
      if (!pattern.matcher(fieldText(event, field)).find()) return false;
    }
    for (const [key, pattern] of data) {
      const value = dataText(event, key);
      if (value === undefined || !pattern.matcher(value).find()) return false;
    }
    return true;
  };
}

function compilePattern(text: string, where: string): RE2JS {
  try {
    return RE2JS.compile(text, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    throw new FilterError(`${where}: not a valid expression (${(error as Error).message})`);
  }
}

/** A top-level field as text; `level` by its name (`error|warn` matches as in the reference). */
function fieldText(event: BusEvent, field: string): string {
  const value = event.fields[field];
  if (field === 'level' && typeof value === 'number') return LEVEL_NAMES[value] ?? '';
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';
}

/** A key of a log line's `data`, or else a field of the event (`id`, `state`, `name`, `path`…). */
function dataText(event: BusEvent, key: string): string | undefined {
  if (key === 'event') return event.event;
  const data = event.fields.data;
  if (typeof data === 'object' && key in data) return data[key];
  const value = event.fields[key];
  return value === undefined || typeof value === 'object' ? undefined : String(value);
}
