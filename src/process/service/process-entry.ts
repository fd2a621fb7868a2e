import type { ProcessConfig } from '../config/index.js';
import type { ProcessReport, Supervisor } from '../supervise/index.js';

/** One process the server knows: its config (with placeholders), its runtime and its metadata. */
export interface ProcessEntry {
  config: ProcessConfig;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds. */
  updatedAt: number;
  metadata: Record<string, unknown>;
  report: ProcessReport;
  supervisor: Supervisor;
}
