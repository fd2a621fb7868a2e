import type { ProcessConfig } from '../config/index.js';
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
  metadata: Record<string, unknown>;
  report: ProcessReport;
  supervisor: Supervisor;
}
