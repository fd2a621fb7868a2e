import { maskEvent, parsePinoLine } from '../log/index.js';
import type { EventFields } from './event-sink.js';

/** The reference's numbers of the log levels in its events (`level`), by the log's names. */
const LEVEL_NUMBERS: Readonly<Record<string, number>> = { ERROR: 1, WARN: 2, INFO: 3, DEBUG: 4 };

/**
 * One line the server logged (pino's JSON), as a `log` event in the reference's shape: `event` is
 * the component (lower case), `level` its number (1 error … 4 debug, the reference's `log.Level`,
 * which core-client-go reads as a number), `message`, and `data` with every value as text. Secrets
 * are masked as `GET /api/v3/log` masks them.
 */
export function logLineEvent(
  line: string,
  secrets: readonly string[],
): { component: string; fields: EventFields } {
  const parsed = maskEvent(parsePinoLine(line), secrets);
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed.data)) {
    data[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return {
    component: parsed.component.toLowerCase(),
    fields: { level: LEVEL_NUMBERS[parsed.level] ?? 3, message: parsed.message, data },
  };
}
