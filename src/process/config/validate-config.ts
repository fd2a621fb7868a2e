import { parseOutputReference } from './address.js';
import { processIdProblems } from './process-id.js';
import type { InputFallback, ProcessConfig, ProcessInput, ProcessIO } from './contract.js';

export interface ValidationContext {
  /**
   * The encoder access policy (issue 10 item 2): what the encoder of `resolved` may not read,
   * write or reach, as `<field path>: <reason>`. `written` is the config as given.
   */
  access(resolved: ProcessConfig, written: ProcessConfig): string[];
  /** Another process's config by id, for input references; `undefined` when unknown. */
  lookup(id: string): ProcessConfig | undefined;
  /** Names of the S3 filesystems, which cleanup patterns may name besides the built-in ones. */
  s3Names?: readonly string[];
}

const BUILT_IN_FILESYSTEMS = ['mem', 'memfs', 'disk', 'diskfs'];

/**
 * The semantic checks of docs/processes.md#process-config, each problem as `<field path>: <reason>`. Addresses and
 * options are checked on `resolved` (the config with its placeholders resolved, `resolveConfig`),
 * so `{diskfs}/../x` is caught like `/x`.
 */
export function validateProcessConfig(
  config: ProcessConfig,
  resolved: ProcessConfig,
  context: ValidationContext,
): string[] {
  const problems: string[] = [];
  if (config.type !== 'ffmpeg')
    problems.push(`type: unsupported process type "${String(config.type)}", supported: ffmpeg`);
  if (config.id === '') problems.push('id: must not be empty');
  if (config.id.includes('/')) problems.push('id: must not contain "/"');
  problems.push(...processIdProblems(config.id));
  if (config.input.length === 0) problems.push('input: at least one input is required');
  if (config.output.length === 0) problems.push('output: at least one output is required');
  // On the resolved ids: `{processid}` and the process id itself are the same id when it runs.
  checkIds('input', resolved.input, config.input, problems);
  checkIds('output', resolved.output, config.output, problems);
  resolved.input.forEach((input, index) => checkInput(config, input, `input[${index}]`, context, problems));
  const filesystems = [...BUILT_IN_FILESYSTEMS, ...(context.s3Names ?? [])];
  resolved.output.forEach((output, index) => checkOutput(output, `output[${index}]`, filesystems, problems));
  // An empty address is named once above; the policy would refuse it a second time.
  const empty = (io: ProcessIO): boolean => io.address === '';
  if (!resolved.input.some(empty) && !resolved.output.some(empty)) {
    problems.push(...context.access(resolved, config));
  }
  return problems;
}

function checkIds(
  kind: 'input' | 'output',
  resolved: ProcessIO[],
  written: ProcessIO[],
  problems: string[],
): void {
  const seen = new Set<string>();
  resolved.forEach((io, index) => {
    if (seen.has(io.id)) {
      const given = written[index]?.id ?? io.id;
      const origin = given === io.id ? '' : ` (written "${given}")`;
      problems.push(`${kind}[${index}].id: duplicate ${kind} id "${io.id}"${origin}`);
    }
    seen.add(io.id);
  });
}

function checkInput(
  config: ProcessConfig,
  input: ProcessInput,
  path: string,
  context: ValidationContext,
  problems: string[],
): void {
  if (input.fallback !== undefined) checkFallback(input.fallback, `${path}.fallback`, problems);
  if (input.address === '') {
    problems.push(`${path}.address: must not be empty`);
    return;
  }
  const reference = parseOutputReference(input.address);
  if (reference === undefined) return;
  if (reference.processId === config.id) {
    problems.push(`${path}.address: a process cannot read its own output ("${input.address}")`);
    return;
  }
  const other = context.lookup(reference.processId);
  if (other === undefined) {
    problems.push(
      `${path}.address: unknown process "${reference.processId}" in reference "${input.address}"`,
    );
  } else if (!other.output.some((output) => output.id === reference.outputId)) {
    problems.push(
      `${path}.address: process "${reference.processId}" has no output "${reference.outputId}" (reference "${input.address}")`,
    );
  }
}

/** The bounds of a fallback's timings (docs/processes.md#fallback-sources). */
function checkFallback(fallback: InputFallback, path: string, problems: string[]): void {
  const bounds: [keyof InputFallback & `${string}_seconds`, number, number][] = [
    ['timeout_seconds', 0.2, 3600],
    ['return_after_seconds', 0, 86400],
    ['switch_back_interval_seconds', 0, 86400],
  ];
  for (const [key, minimum, maximum] of bounds) {
    const value = fallback[key];
    if (value < minimum || value > maximum)
      problems.push(`${path}.${key}: must be between ${minimum} and ${maximum} (got ${value})`);
  }
}

function checkOutput(
  output: ProcessIO,
  path: string,
  filesystems: readonly string[],
  problems: string[],
): void {
  if (output.address === '') problems.push(`${path}.address: must not be empty`);
  output.cleanup.forEach((rule, index) => {
    if (!filesystems.some((name) => rule.pattern.startsWith(`${name}:`))) {
      const names = filesystems.map((name) => `${name}:`);
      problems.push(
        `${path}.cleanup[${index}].pattern: must start with ${names.slice(0, -1).join(', ')} or ${names.at(-1) ?? ''} (got "${rule.pattern}")`,
      );
    }
  });
}
