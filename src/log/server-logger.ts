import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogBuffer } from './log-buffer.js';

/**
 * The server's logger: JSON lines to `destination` (stdout by default) and into `buffer`, which
 * `GET /api/v3/log` reads. Both get every line at `level` and above.
 */
export function createServerLogger(
  level: string,
  buffer: LogBuffer,
  destination: DestinationStream = process.stdout,
): Logger {
  return pino(
    { level },
    pino.multistream([
      { stream: destination, level: level as pino.Level },
      { stream: buffer, level: level as pino.Level },
    ]),
  );
}
