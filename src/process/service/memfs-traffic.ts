import { memfsPrefixes, OutputPrefixIndex, type InputRef, type OutputPrefix } from '../config/index.js';
import { InputReadMeter } from './input-read-meter.js';
import type { ProcessTable } from './process-table.js';

/**
 * What processes move through the memory filesystem: bytes their outputs write (found by the
 * memfs URL prefixes of their resolved output addresses) and bytes their inputs read (counted by
 * the mount hook), handed to the process's supervisor for its progress.
 */
export class MemfsTraffic {
  private readonly prefixes = new OutputPrefixIndex();
  /** The mount hook that meters memfs reads of process inputs; app.ts registers it. */
  readonly inputReadMeter = new InputReadMeter((ref, bytes) => this.onInputRead(ref, bytes));

  constructor(private readonly table: ProcessTable) {}

  /** Call after every change of the processes or of the memfs URL. */
  rebuild(memfsUrl: string): void {
    const all: OutputPrefix[] = [];
    for (const entry of this.table.all()) {
      entry.resolved.output.forEach((output, index) => {
        for (const prefix of memfsPrefixes(output, memfsUrl))
          all.push({ processId: entry.config.id, output: index, prefix });
      });
    }
    this.prefixes.replace(all);
  }

  /** A file written to memfs (the filesystem's write listener). */
  onMemWrite(path: string, bytes: number): void {
    const match = this.prefixes.find(path);
    if (match === undefined) return;
    this.table.get(match.processId)?.supervisor.addOutputBytes(match.output, bytes);
  }

  private onInputRead(ref: InputRef, bytes: number): void {
    const entry = this.table.get(ref.processId);
    if (entry === undefined || ref.input >= entry.config.input.length) return;
    entry.supervisor.addInputBytes(ref.input, bytes);
  }
}
