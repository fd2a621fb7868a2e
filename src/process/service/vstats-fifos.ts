import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { VstatsChannel } from '../progress/index.js';
import type { Supervisor } from '../supervise/index.js';

/**
 * The `-vstats` FIFOs of the processes (per-frame video statistics): one per process in a
 * directory of the server's own, made on first use and removed at shutdown.
 */
export class VstatsFifos {
  private dir: Promise<string | undefined> | undefined;
  private count = 0;

  constructor(
    private readonly logger: Logger,
    private readonly budget: { maxLineLength: number; bytesPerSecond: number },
  ) {}

  /** Opens a FIFO for `supervisor`; without one its process runs without per-frame statistics. */
  async attach(supervisor: Supervisor): Promise<void> {
    this.dir ??= mkdtemp(join(tmpdir(), `streamcore-vstats-${process.pid}-`)).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'no directory for -vstats FIFOs; per-stream video statistics are off');
      return undefined;
    });
    const dir = await this.dir;
    if (dir === undefined) return;
    const channel = await VstatsChannel.open(join(dir, `${++this.count}.fifo`), {
      ...this.budget,
      onLine: (line) => supervisor.onVstatsLine(line),
    });
    if (channel !== undefined) supervisor.attachVstats(channel);
  }

  /** Removes the directory (after every supervisor is disposed). */
  async close(): Promise<void> {
    const dir = await this.dir;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
}
