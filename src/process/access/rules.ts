import { RE2JS } from 're2js';

/** Which way an encoder uses an address. */
export type Direction = 'input' | 'output';

/** The user's rules for one direction (`ffmpeg.access.<direction>.*`). */
export interface DirectionRules {
  /** An address matching one of these is refused (checked first, as in the reference). */
  block: readonly RE2JS[];
  /** When not empty, an address must match one of these. */
  allow: readonly RE2JS[];
  /** Absolute files or directories outside the disk directory that encoders may use this way. */
  paths: readonly string[];
}

export interface AccessRules {
  input: DirectionRules;
  output: DirectionRules;
  /** Device formats (`-f v4l2`, `-f alsa`, …) encoders may open; none by default. */
  devices: ReadonlySet<string>;
}

/** The config keys the rules come from, as the config schema holds them. */
export interface AccessSettings {
  input: { allow: readonly string[]; block: readonly string[]; paths: readonly string[] };
  output: { allow: readonly string[]; block: readonly string[]; paths: readonly string[] };
  devices: readonly string[];
}

/**
 * Compiles the settings. Expressions use RE2 syntax like the reference's Go `regexp` (linear-time
 * matching, so a rule cannot stall a request); empty ones are skipped, as in the reference.
 * Throws naming the key of an expression that does not compile (see `accessSettingProblems`).
 */
export function compileAccessRules(settings: AccessSettings): AccessRules {
  const compile = (list: readonly string[]): RE2JS[] =>
    list
      .map((text) => text.trim())
      .filter((text) => text !== '')
      .map((text) => RE2JS.compile(text));
  return {
    input: {
      block: compile(settings.input.block),
      allow: compile(settings.input.allow),
      paths: [...settings.input.paths],
    },
    output: {
      block: compile(settings.output.block),
      allow: compile(settings.output.allow),
      paths: [...settings.output.paths],
    },
    devices: new Set(settings.devices.map((format) => format.trim().toLowerCase())),
  };
}

/** One line per bad setting, naming its key (for config validation at start-up). */
export function accessSettingProblems(settings: AccessSettings): string[] {
  const problems: string[] = [];
  for (const direction of ['input', 'output'] as const) {
    for (const list of ['allow', 'block'] as const) {
      for (const text of settings[direction][list]) {
        try {
          RE2JS.compile(text.trim());
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

/**
 * The reference's validator: blocked when any form matches a block expression; otherwise allowed
 * when there are no allow expressions or any form matches one. `forms` are the spellings of one
 * address (for a local file: as written and as `file:<absolute path>`).
 */
export function matchesRules(
  forms: readonly string[],
  rules: DirectionRules,
): 'blocked' | 'not-allowed' | 'ok' {
  if (rules.block.some((re) => forms.some((form) => re.matcher(form).find()))) return 'blocked';
  if (rules.allow.length === 0) return 'ok';
  return rules.allow.some((re) => forms.some((form) => re.matcher(form).find())) ? 'ok' : 'not-allowed';
}
