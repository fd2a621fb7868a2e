import { RE2JS } from 're2js';

/**
 * The encoder access policy's settings (`ffmpeg.access.*`) as the config holds them: what makes
 * them valid is the config's to say, so that start-up names a bad one; process/access compiles
 * them into the rules it checks encoders against.
 */
export interface AccessSettings {
  input: { allow: readonly string[]; block: readonly string[]; paths: readonly string[] };
  output: { allow: readonly string[]; block: readonly string[]; paths: readonly string[] };
  devices: readonly string[];
}

/**
 * One allow/block expression, compiled. RE2 syntax like the reference's Go `regexp` (linear-time
 * matching, so a rule cannot stall a request); surrounding white space is not part of it. Throws
 * when it does not compile.
 */
export function compileAccessExpression(text: string): RE2JS {
  return RE2JS.compile(text.trim());
}

/** One line per bad setting, naming its key (for config validation at start-up). */
export function accessSettingProblems(settings: AccessSettings): string[] {
  const problems: string[] = [];
  for (const direction of ['input', 'output'] as const) {
    for (const list of ['allow', 'block'] as const) {
      for (const text of settings[direction][list]) {
        try {
          compileAccessExpression(text);
        } catch (error) {
          problems.push(
            `ffmpeg.access.${direction}.${list}: "${text}" is not a valid expression (${(error as Error).message})`,
          );
        }
      }
    }
    for (const path of settings[direction].paths) {
      if (!path.startsWith('/')) {
        problems.push(`ffmpeg.access.${direction}.paths: "${path}" must be an absolute path`);
      } else if (path === '/') {
        problems.push(`ffmpeg.access.${direction}.paths: "/" would open every file; name directories`);
      }
    }
  }
  return problems;
}
