/**
 * process/config: what a process is asked to do. The stored config and its reading, placeholder
 * resolution, output-address rules, the memfs input/output conventions and the ffmpeg command
 * line built from a config. Pure: imports nothing else from process/.
 */
export { absoluteOutputAddress, parseOutputReference } from './address.js';
export { buildCommand } from './command.js';
export { INPUT_HEADER, parseInputHeader, withInputHeader } from './memfs-inputs.js';
export type { InputRef } from './memfs-inputs.js';
export { OutputPrefixIndex, memfsPathProblems, memfsPrefixes, withUserInfo } from './memfs-outputs.js';
export type { OutputPrefix } from './memfs-outputs.js';
export { memfsUrl, resolveConfig } from './placeholders.js';
export type { PlaceholderTemplate, PlaceholderValues } from './placeholders.js';
export type { RunCredential, RunScope } from './run-scope.js';
export { configToPlain, isObject, mergeOver, mergeUpdate, readProcessConfig } from './process-config.js';
export {
  FALLBACK_DEFAULTS,
  ProcessConfig,
  ProcessConfigBody,
  type CleanupRule,
  type InputFallback,
  type ProcessInput,
  type ProcessIO,
  type ProcessLimits,
} from './contract.js';
export { validateProcessConfig } from './validate-config.js';
