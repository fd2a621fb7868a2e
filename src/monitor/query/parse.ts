import type { QueryDeadline } from './deadline.js';
import type { LabelPattern } from './label-pattern.js';
import type { PatternCache } from './pattern-cache.js';

/** Bounds on a query (config `metrics.query.*`). */
export interface QueryLimits {
  /** Most items in `metrics`. */
  maxItems: number;
  /** Longest label pattern, characters. */
  maxPatternLength: number;
  /** Most characters of all label patterns of one query together. */
  maxTotalPatternLength: number;
  /** Most RE2 program instructions of one pattern, and of all patterns of one query together. */
  maxProgramSize: number;
  /** Time budget of one query, ms (→ 503 when spent). */
  maxTimeMs: number;
}

/** One item of `metrics`: a metric name and its label selectors (in request order). */
export interface QueryItem {
  name: string;
  labels: readonly LabelSelector[];
}

/** `label: pattern`, the pattern compiled (`undefined` for the empty pattern, which matches any value). */
export interface LabelSelector {
  label: string;
  pattern: string;
  regexp: LabelPattern | undefined;
}

/** A validated `POST /api/v3/metrics` body (docs/metrics.md#post-apiv3metrics-the-query). */
export interface MetricsQuery {
  /** Seconds; `undefined` = not given (latest-value mode). */
  timerangeSec: number | undefined;
  /** Seconds; `undefined` = not given. */
  intervalSec: number | undefined;
  items: readonly QueryItem[];
}

/** A query the client got wrong; `details` name each field, item and label at fault. */
export class QueryError extends Error {
  readonly details: string[];

  constructor(details: string[]) {
    super(details.join('; '));
    this.name = 'QueryError';
    this.details = details;
  }
}

/**
 * Validates a query body, patterns included (compiled through `patterns`, so each is compiled once).
 * Tolerates what real clients send: an empty body, `null` for any optional field, `labels: null`,
 * extra keys such as `values: null`. Throws `QueryError` listing every problem.
 */
export function parseMetricsQuery(
  body: unknown,
  limits: QueryLimits,
  patterns: PatternCache,
  deadline?: QueryDeadline,
): MetricsQuery {
  const details: string[] = [];
  if (body === undefined || body === null) body = {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new QueryError(['body: must be a JSON object']);
  const record = body as Record<string, unknown>;
  const timerangeSec = parseSeconds(record.timerange_sec, 'timerange_sec', details);
  const intervalSec = parseSeconds(record.interval_sec, 'interval_sec', details);
  const context: ItemContext = {
    limits,
    patterns,
    deadline,
    details,
    patternLength: 0,
    programSize: 0,
    refused: false,
  };
  const items = parseItems(record.metrics, context);
  if (details.length > 0) throw new QueryError(details);
  return { timerangeSec, intervalSec, items };
}

/** `0`, `null` and absent mean "not given"; anything but a non-negative integer is an error. */
function parseSeconds(value: unknown, field: string, details: string[]): number | undefined {
  if (value === undefined || value === null || value === 0) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    details.push(`${field}: must be a non-negative integer (seconds), got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/**
 * What the item parsers share: the bounds, the pattern cache and the list of problems. This runs
 * on every query, so the success path builds no message strings.
 */
interface ItemContext {
  limits: QueryLimits;
  patterns: PatternCache;
  deadline: QueryDeadline | undefined;
  details: string[];
  /** Characters and program instructions of the patterns so far. */
  patternLength: number;
  programSize: number;
  /** A total is over its bound: no further pattern is compiled. */
  refused: boolean;
}

const NO_LABELS: QueryItem['labels'] = [];

function parseItems(value: unknown, context: ItemContext): QueryItem[] {
  const { limits, details } = context;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    details.push(`metrics: must be an array of {name, labels} items, got ${describe(value)}`);
    return [];
  }
  if (value.length > limits.maxItems) {
    details.push(`metrics: at most ${limits.maxItems} items are allowed, got ${value.length}`);
    return [];
  }
  const items: QueryItem[] = [];
  for (let index = 0; index < value.length; index++) {
    const item = parseItem(value[index] as unknown, index, context);
    if (item !== undefined) items.push(item);
  }
  return items;
}

function parseItem(entry: unknown, index: number, context: ItemContext): QueryItem | undefined {
  const { details } = context;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    details.push(`metrics[${index}]: must be an object {name, labels}, got ${describe(entry)}`);
    return undefined;
  }
  const { name, labels } = entry as Record<string, unknown>;
  if (typeof name !== 'string') {
    details.push(`metrics[${index}].name: must be a string, got ${describe(name)}`);
    return undefined;
  }
  if (labels === undefined || labels === null) return { name, labels: NO_LABELS };
  if (typeof labels !== 'object' || Array.isArray(labels)) {
    details.push(
      `metrics[${index}] (${name}).labels: must be an object mapping label names to patterns, got ${describe(labels)}`,
    );
    return undefined;
  }
  const selectors: LabelSelector[] = [];
  for (const label in labels) {
    const problem = parseSelector(label, (labels as Record<string, unknown>)[label], context);
    if (typeof problem === 'string') details.push(`metrics[${index}] (${name}).labels.${label}: ${problem}`);
    else selectors.push(problem);
  }
  return { name, labels: selectors };
}

/** One `label: pattern` entry: the selector, or what is wrong with it. */
function parseSelector(label: string, pattern: unknown, context: ItemContext): LabelSelector | string {
  // `null` is what a Go client's zero value looks like on the wire: the empty pattern (any value).
  const source = pattern ?? '';
  if (typeof source !== 'string') return `must be a string (RE2 pattern), got ${describe(source)}`;
  const { limits } = context;
  const max = limits.maxPatternLength;
  if (source.length > max) return `pattern is ${source.length} characters, at most ${max} are allowed`;
  let regexp: LabelPattern | undefined;
  if (source !== '') {
    const compiled = compileWithinBudget(source, context);
    if (typeof compiled === 'string') return compiled;
    regexp = compiled;
  }
  return { label, pattern: source, regexp };
}

/**
 * Compiles a pattern unless the query's patterns together are over their bounds already; counts it
 * against them. Compiling cannot be interrupted, so these bounds are what limits its time.
 */
function compileWithinBudget(source: string, context: ItemContext): LabelPattern | string {
  const { limits } = context;
  if (context.refused) return 'not compiled: the query is over its pattern bounds already';
  context.patternLength += source.length;
  if (context.patternLength > limits.maxTotalPatternLength) {
    context.refused = true;
    return `the patterns of the query have ${context.patternLength} characters or more, at most ${limits.maxTotalPatternLength} are allowed in all (metrics.query.max_total_pattern_length)`;
  }
  const cached = context.patterns.has(source);
  const compiled = context.patterns.get(source);
  if (!cached) context.deadline?.check();
  if (!compiled.ok) return compiled.reason;
  context.programSize += compiled.size;
  if (context.programSize > limits.maxProgramSize) {
    context.refused = true;
    return `the patterns of the query compile to ${context.programSize} instructions or more, at most ${limits.maxProgramSize} are allowed in all (metrics.query.max_program_size)`;
  }
  return compiled.regexp;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return String(value);
  return `a ${typeof value}`;
}
