import type { ChildProcess, SpawnOptions } from 'node:child_process';

/** `child_process.spawn`, injectable (STYLE §4). */
export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
