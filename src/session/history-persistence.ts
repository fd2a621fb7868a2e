import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { SerialFileWriter } from '../persistence/atomic-write.js';
import type { SessionCollector } from './session-collector.js';

/**
 * Keeps the history of each collector in `<db.dir>/sessions/<collector>.json` (docs/sessions.md#the-contract), written
 * atomically; loaded once at start. A missing file is an empty history; an unreadable one is
 * logged and left in place (not overwritten until the next successful save replaces it).
 */
export class HistoryPersistence {
  private readonly writers = new Map<string, SerialFileWriter>();

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {}

  fileOf(collector: SessionCollector): string {
    return join(this.dir, `${collector.name}.json`);
  }

  async load(collectors: readonly SessionCollector[]): Promise<void> {
    for (const collector of collectors) {
      const file = this.fileOf(collector);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.logger.warn({ err: error, file }, 'cannot read the session history');
        }
        continue;
      }
      try {
        const { loaded, skipped } = collector.loadHistory(JSON.parse(text) as unknown);
        if (skipped > 0)
          this.logger.warn({ file, loaded, skipped }, 'skipped malformed session history entries');
      } catch (error) {
        this.logger.warn({ err: error, file }, 'the session history is not valid JSON; starting empty');
      }
    }
  }

  async save(collectors: readonly SessionCollector[]): Promise<void> {
    await Promise.all(
      collectors.map((collector) => {
        const file = this.fileOf(collector);
        let writer = this.writers.get(file);
        if (writer === undefined) {
          writer = new SerialFileWriter(file, 0o600);
          this.writers.set(file, writer);
        }
        return writer.write(`${JSON.stringify(collector.history.toFile())}\n`);
      }),
    );
  }
}
