import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `command` names an executable file, directly or through PATH (as execvp finds it). */
export function isExecutable(command: string, path: string): boolean {
  const candidates = command.includes('/')
    ? [command]
    : path.split(delimiter).map((dir) => join(dir || '.', command));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
