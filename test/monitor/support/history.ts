import { pino, type Logger } from 'pino';
import { MetricHistory } from '../../../src/monitor/history/index.js';
import { describeSeries, type SeriesInfo } from '../../../src/monitor/history/series-kind.js';
import { METRIC_INDEX } from '../../../src/monitor/store/store.js';

/** Set-up shared by the history tests (test/monitor/history-*.test.ts). */

/** A line the history logged: its message and, for a skipped file, the file. */
export interface LoggedLine {
  msg: string;
  file?: string;
}

/** A logger whose lines are kept, to check what the history logs (and how often). */
export function recordingLogger(): { logger: pino.Logger; lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => lines.push(JSON.parse(line) as LoggedLine) },
  );
  return { logger, lines };
}

/** The series of one value (`fps`, `frame` …) of a running process's `restream_process` metric. */
export function processSeries(process: string, value: string): SeriesInfo {
  return describeSeries(METRIC_INDEX.get('restream_process')!, [process, 'running', 'start', value]);
}

/** A history at `dir` with the default retentions and no size cap, loaded. */
export async function openHistory(
  dir: string,
  logger: Logger = pino({ level: 'silent' }),
): Promise<MetricHistory> {
  const history = new MetricHistory({
    dir,
    minuteRetentionDays: 7,
    hourRetentionDays: 400,
    maxSizeBytes: 0,
    logger,
  });
  await history.load();
  return history;
}
