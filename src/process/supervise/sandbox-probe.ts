import type { ChildProcess } from 'node:child_process';
import { sandboxArgs, type SandboxPlaces } from './sandbox-args.js';
import type { SpawnFn } from './spawn.js';

/** Why the sandbox cannot run encoders here. */
export interface SandboxProblem {
  /**
   * `unavailable`: bubblewrap does not work on this machine (missing, no user namespaces, a place
   * it cannot mount). `program-hidden`: it works, but the encoder binary is not visible inside.
   */
  kind: 'unavailable' | 'program-hidden';
  message: string;
}

/** The probe's exit code for "the program is not there" (bwrap's own failures exit with 1). */
const PROGRAM_MISSING = 97;

/**
 * Whether bubblewrap confines a command here, with the places of real runs: undefined when it
 * does, else why not. With `program` (the encoder binary's real path) it checks inside the
 * sandbox that the binary is there and executable (`test -x`, run by `/bin/sh`); without, it runs
 * `true`.
 */
export function probeSandbox(
  spawn: SpawnFn,
  bwrap: string,
  places: SandboxPlaces,
  program?: string,
  timeoutMs = 5000,
): Promise<SandboxProblem | undefined> {
  const command =
    program === undefined
      ? { command: 'true', args: [] }
      : { command: '/bin/sh', args: ['-c', `test -x "$1" || exit ${PROGRAM_MISSING}`, 'sh', program] };
  return new Promise((resolve) => {
    let done = false;
    let stderr = '';
    const finish = (problem: SandboxProblem | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(problem);
    };
    const unavailable = (message: string): void => finish({ kind: 'unavailable', message });
    let child: ChildProcess;
    try {
      child = spawn(bwrap, sandboxArgs(places, 3, command, program), {
        stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      unavailable(`${bwrap}: ${(error as Error).message}`);
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      unavailable(`${bwrap} did not finish within ${timeoutMs} ms`);
    }, timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < 2048) stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => unavailable(`${bwrap}: ${error.message}`));
    child.once('close', (code) => {
      if (code === 0) finish(undefined);
      else if (code === PROGRAM_MISSING && program !== undefined)
        finish({ kind: 'program-hidden', message: `${program} is not visible inside the sandbox` });
      else unavailable(`${bwrap} exited with code ${code}: ${stderr.trim() || 'no message'}`);
    });
  });
}
