import { spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');
// Resolved here, not by the child: the child's working directory is a temp dir without node_modules.
const TSX_LOADER = import.meta.resolve('tsx');

export interface MainExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `src/main.ts` (or another entry script, e.g. `fast-clock-main.ts`) as its own process, the
 * way `npm start` does (minus the build), with only PATH and the given env. `listening` resolves
 * with the base URL from the start-up log line.
 */
export function startMain(env: Record<string, string>, cwd: string, entry: string = MAIN) {
  return startNode(['--import', TSX_LOADER, entry], env, cwd);
}

/**
 * Runs a built entry (`dist/main.js`) as `npm start` does, with only PATH and the given env, and
 * the Node flags the start script gives it, if any.
 */
export function startBuiltMain(
  entry: string,
  env: Record<string, string>,
  cwd: string,
  nodeFlags: readonly string[] = [],
) {
  return startNode([...nodeFlags, entry], env, cwd);
}

function startNode(args: string[], env: Record<string, string>, cwd: string) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<MainExit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /"url":"(http:\/\/[^"]+)"/.exec(stdout);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    void exited.then(() => reject(new Error(`exited before listening: ${stderr}`)));
  });
  // A caller that only awaits `exited` must not see an unhandled rejection from `listening`.
  listening.catch(() => undefined);
  return { child, exited, listening };
}
