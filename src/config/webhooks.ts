import type { Webhook } from './schema.js';

/** The kinds a webhook may ask for (`events`): those of the event bus (docs/events.md). */
const EVENT_TYPES: ReadonlySet<string> = new Set([
  'process',
  'log',
  'media',
  'filesystem',
  'session',
  'config',
]);

/**
 * Checks one `events.webhooks` item as read from the file or `CORE_EVENTS_WEBHOOKS`: an http(s)
 * URL, the kinds of events it wants (none: all), and its signing secret. Returns it or a problem
 * that never quotes the secret.
 */
export function validateWebhook(json: unknown): Webhook | string {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return 'a webhook must be a JSON object';
  const record = json as Record<string, unknown>;
  if (typeof record.url !== 'string') return 'url must be a string';
  let url: URL;
  try {
    url = new URL(record.url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'url must be an absolute http or https URL';
  const events = record.events ?? [];
  if (!Array.isArray(events) || events.some((type) => typeof type !== 'string')) {
    return 'events must be an array of strings';
  }
  const unknown = (events as string[]).find((type) => type !== '*' && !EVENT_TYPES.has(type));
  if (unknown !== undefined) return `events: "${unknown}" is not one of ${[...EVENT_TYPES].join(', ')}, *`;
  if (typeof record.secret !== 'string' || record.secret.length < 16) {
    return 'secret must be a string of at least 16 characters';
  }
  return { url: record.url, events: events as string[], secret: record.secret };
}

/** `CORE_EVENTS_WEBHOOKS`: the list as JSON. */
export function parseWebhooksEnv(value: string): { value: Webhook[] } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { problem: 'must be a JSON array of webhook objects' };
  }
  return validateWebhooks(json);
}

/** The whole list, each item checked; the problem names the item (1-based). */
export function validateWebhooks(json: unknown): { value: Webhook[] } | { problem: string } {
  if (!Array.isArray(json)) return { problem: 'must be an array of webhook objects' };
  const hooks: Webhook[] = [];
  for (const [index, item] of json.entries()) {
    const hook = validateWebhook(item);
    if (typeof hook === 'string') return { problem: `item ${index + 1}: ${hook}` };
    hooks.push(hook);
  }
  return { value: hooks };
}
