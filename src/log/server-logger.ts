import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogBuffer } from './log-buffer.js';

/**
 * The server's logger: JSON lines to `destination` (stdout by default) and into `buffer`, which
 * `GET /api/v3/log` reads. Both get every line at `level` and above.
 */
export function createServerLogger(
  level: string,
  buffer: LogBuffer,
  destination: DestinationStream = outputThatMayClose(process.stdout),
): Logger {
  // The streams take every line the logger lets through: `logger.level` alone decides, so a
  // reload of `log.level` lowers or raises it for both.
  return pino(
    { level },
    pino.multistream([
      { stream: destination, level: 'trace' },
      { stream: buffer, level: 'trace' },
    ]),
  );
}

/**
 * A destination over an output stream whose reader can go away (a pipe to a supervisor or a
 * `| tee` that exited). Without a listener, the stream's EPIPE becomes an uncaught exception,
 * whose log line fails the same way, forever: the server then spins and never stops on SIGTERM.
 * After the first error the lines go only to the other destinations (the ring buffer).
 */
function outputThatMayClose(stream: NodeJS.WritableStream): DestinationStream {
  let closed = false;
  stream.on('error', () => {
    closed = true;
  });
  return {
    write(line: string): void {
      if (!closed) stream.write(line);
    },
  };
}
