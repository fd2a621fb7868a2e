import { absoluteOutputAddress } from './address.js';
import type { ProcessConfig } from './contract.js';

/**
 * The argument vector of a resolved config (docs/processes.md#process-config): the server's own options first (so that
 * the user's global options can still override them), then the global `options`, then per input
 * its options, `-i` and its address, then per output its options and its address. Relative file
 * outputs are made absolute against the disk directory.
 */
export function buildCommand(
  config: ProcessConfig,
  serverOptions: readonly string[],
  diskDir: string,
): string[] {
  const args = [...serverOptions, ...config.options];
  for (const input of config.input) args.push(...input.options, '-i', input.address);
  for (const output of config.output)
    args.push(...output.options, absoluteOutputAddress(output.address, diskDir));
  return args;
}
