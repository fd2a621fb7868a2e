import type { PatternCache } from './pattern-cache.js';

/** Bounds on a query (config `metrics.query.*`). */
export interface QueryLimits {
  /** Most items in `metrics`. */
  maxItems: number;
  /** Longest label pattern, characters. */
  maxPatternLength: number;
}

/** One item of `metrics`: a metric name and label name → RE2 pattern (in request order). */
export interface QueryItem {
  name: string;
  labels: readonly (readonly [label: string, pattern: string])[];
}

/** A validated `POST /api/v3/metrics` body (SPEC §5.2). */
export interface MetricsQuery {
  /** Seconds; `undefined` = not given (latest-value mode). */
  timerangeSec: number | undefined;
  /** Seconds; `undefined` = not given. */
  intervalSec: number | undefined;
  items: readonly QueryItem[];
  /** Canonical text of the query: equal keys mean equal answers for the same snapshot. */
  key: string;
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
export function parseMetricsQuery(body: unknown, limits: QueryLimits, patterns: PatternCache): MetricsQuery {
  const details: string[] = [];
  if (body === undefined || body === null) body = {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new QueryError(['body: must be a JSON object']);
  const record = body as Record<string, unknown>;
  const timerangeSec = parseSeconds(record.timerange_sec, 'timerange_sec', details);
  const intervalSec = parseSeconds(record.interval_sec, 'interval_sec', details);
  const items = parseItems(record.metrics, { limits, patterns, details });
  if (details.length > 0) throw new QueryError(details);
  return {
    timerangeSec,
    intervalSec,
    items,
    key: JSON.stringify([timerangeSec ?? 0, intervalSec ?? 0, items.map((item) => [item.name, item.labels])]),
  };
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

/** What the item parsers share: the bounds, the pattern cache, and the list of problems. */
interface ItemContext {
  limits: QueryLimits;
  patterns: PatternCache;
  details: string[];
}

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
  value.forEach((entry: unknown, index) => {
    const item = parseItem(entry, `metrics[${index}]`, context);
    if (item !== undefined) items.push(item);
  });
  return items;
}

function parseItem(entry: unknown, path: string, context: ItemContext): QueryItem | undefined {
  const { limits, patterns, details } = context;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    details.push(`${path}: must be an object {name, labels}, got ${describe(entry)}`);
    return undefined;
  }
  const { name, labels } = entry as Record<string, unknown>;
  if (typeof name !== 'string') {
    details.push(`${path}.name: must be a string, got ${describe(name)}`);
    return undefined;
  }
  const where = `${path} (${name})`;
  if (labels === undefined || labels === null) return { name, labels: [] };
  if (typeof labels !== 'object' || Array.isArray(labels)) {
    details.push(
      `${where}.labels: must be an object mapping label names to patterns, got ${describe(labels)}`,
    );
    return undefined;
  }
  const selectors: [string, string][] = [];
  for (const [label, pattern] of Object.entries(labels as Record<string, unknown>)) {
    // `null` is what a Go client's zero value looks like on the wire: the empty pattern (any value).
    const source = pattern ?? '';
    if (typeof source !== 'string') {
      details.push(`${where}.labels.${label}: must be a string (RE2 pattern), got ${describe(source)}`);
    } else if (source.length > limits.maxPatternLength) {
      details.push(
        `${where}.labels.${label}: pattern is ${source.length} characters, at most ${limits.maxPatternLength} are allowed`,
      );
    } else {
      const compiled = source === '' ? undefined : patterns.get(source);
      if (compiled?.ok === false)
        details.push(`${where}.labels.${label}: invalid RE2 pattern: ${compiled.reason}`);
      else selectors.push([label, source]);
    }
  }
  return { name, labels: selectors };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return String(value);
  return `a ${typeof value}`;
}
