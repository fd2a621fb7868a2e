import type { ProcessConfig } from '../config/index.js';
import type { LiveInputs } from '../fallback/index.js';
import type { ProcessReport, Supervisor } from '../supervise/index.js';

/** One process the server knows: its config (with placeholders), its runtime and its metadata. */
export interface ProcessEntry {
  config: ProcessConfig;
  /**
   * The config with its placeholders resolved: once per create or update, and once more for the
   * processes loaded from the db when the server listens and the last values are known.
   */
  resolved: ProcessConfig;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds. */
  updatedAt: number;
  /** Changed in place (`setMetadata`), so that the values a client stored stay the same object. */
  metadata: Record<string, unknown>;
  /** Counts the changes of `metadata`: the process list keeps its JSON until this moves. */
  metadataRevision: number;
  report: ProcessReport;
  supervisor: Supervisor;
  /** Which source feeds each input with a fallback (docs/processes.md#fallback-sources). */
  liveInputs: LiveInputs;
}
