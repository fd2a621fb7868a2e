import type { ChildProcess } from 'node:child_process';
import { sandboxArgs, type SandboxPlaces } from './sandbox-args.js';
import type { SpawnFn } from './spawn.js';

/** Why the sandbox cannot run encoders here. */
export interface SandboxProblem {
  /**
   * `unavailable`: bubblewrap does not work on this machine (missing, no user namespaces, a place
   * it cannot mount). `program-unusable`: it works, but the encoder binary cannot run inside (it
   * is not visible there, nor its interpreter, or its libraries are not).
   */
  kind: 'unavailable' | 'program-unusable';
  message: string;
}

/**
 * Whether bubblewrap confines a command here, with the places of real runs: undefined when it
 * does, else why not. With `program` (the encoder binary's real path, as encoders are run) it
 * runs `program -version` inside, and tells a program that cannot start there (bwrap's `execvp`
 * fails, or the dynamic loader misses a library) from one that ran, whatever it answered (a
 * stand-in need not be ffmpeg); without, it runs `true`.
 */
export function probeSandbox(
  spawn: SpawnFn,
  bwrap: string,
  places: SandboxPlaces,
  program?: string,
  timeoutMs = 5000,
): Promise<SandboxProblem | undefined> {
  const command =
    program === undefined ? { command: 'true', args: [] } : { command: program, args: ['-version'] };
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
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.once('error', (error) => unavailable(`${bwrap}: ${error.message}`));
    child.once('close', (code) => {
      if (code === 0) return finish(undefined);
      const cannotStart = program === undefined ? undefined : startFailure(stderr);
      if (cannotStart !== undefined) return finish({ kind: 'program-unusable', message: cannotStart });
      // bwrap's own failures exit with 1 and say so; any other end is the program's own answer.
      if (/^bwrap: /m.test(stderr) || program === undefined) {
        return unavailable(`${bwrap} exited with code ${code}: ${stderr.trim() || 'no message'}`);
      }
      finish(undefined);
    });
  });
}

/** The line saying that the program could not start inside the sandbox, if there is one. */
function startFailure(stderr: string): string | undefined {
  return /^(bwrap: execvp .*|.*error while loading shared libraries.*)$/m.exec(stderr)?.[1];
}
