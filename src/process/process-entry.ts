import type { ProcessConfig } from './process-config.js';
import type { ProcessReport } from './report.js';
import type { Supervisor } from './supervisor.js';

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
