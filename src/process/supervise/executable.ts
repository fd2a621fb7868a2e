import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `command` names an executable file, directly or through PATH (as execvp finds it). */
export function isExecutable(command: string, path: string): boolean {
  return findExecutable(command, path) !== undefined;
}

/**
 * The file execvp would run for `command`: `command` itself when it has a `/`, else the first
 * executable `<dir>/<command>` of PATH (an empty entry is the working directory).
 */
export function findExecutable(command: string, path: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : path.split(delimiter).map((dir) => join(dir || '.', command));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
