/**
 * process/supervise: one child process over time. The state machine (supervisor), one run of
 * ffmpeg, resource limits and usage, the report (logs of runs), credential masking of what is
 * logged, the encoder probe, and what keeps encoders from outliving the server (parent-death
 * signal, pid registry) and the filesystem sandbox (bubblewrap).
 */
export { EncoderRegistry, type EncoderRegistryDeps } from './encoder-registry.js';
export { probeParentDeathSignal, withParentDeathSignal } from './parent-death.js';
export { realProgram, withSandbox } from './sandbox.js';
export { sandboxArgs, type SandboxPlaces } from './sandbox-args.js';
export { probeSandbox, type SandboxProblem } from './sandbox-probe.js';
export { createCredentialMask, memfsSecrets, RunCredentialMask } from './credential-mask.js';
export type { CredentialMask } from './credential-mask.js';
export { probeEncoder, serverOptions } from './ffmpeg-probe.js';
export type { EncoderInfo } from './ffmpeg-probe.js';
export { readProcessUsage } from './proc-usage.js';
export { ProcessReport } from './report.js';
export type { RunLog } from './report.js';
export { encoderPidOf, type SpawnFn } from './spawn.js';
export type { RunPipe } from './run.js';
export { withoutServerEnvironment } from './server-env.js';
export { STATES, zeroStateCounts } from './states.js';
export type { Order, ProcessState, StateCounts } from './states.js';
export { Supervisor } from './supervisor.js';
export { timeout, unrefTimeout, type Schedule } from './schedule.js';
export type { PreparedRun } from './supervisor.js';
export { EncoderConnections, type EncoderConnectionsDeps } from './encoder-connections.js';
