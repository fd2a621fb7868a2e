import type { RE2JS } from 're2js';
import { compileAccessExpression, type AccessSettings } from '../../config/index.js';

export type { AccessSettings };

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

/**
 * Compiles the settings (`compileAccessExpression`); empty expressions are skipped, as in the
 * reference. Throws on an expression that does not compile: config validation
 * (`accessSettingProblems`) has refused those at start-up, naming the key.
 */
export function compileAccessRules(settings: AccessSettings): AccessRules {
  const compile = (list: readonly string[]): RE2JS[] =>
    list.filter((text) => text.trim() !== '').map((text) => compileAccessExpression(text));
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

/**
 * Why an address (its `forms`) must not be used in `direction` under the user's rules (a block
 * expression matches, or no allow expression does), or undefined when it may. Also what the
 * webhooks are held to: the server sends nothing where its encoders may not write.
 */
export function directionRefusal(
  forms: readonly string[],
  direction: Direction,
  rules: AccessRules,
): string | undefined {
  const verdict = matchesRules(forms, rules[direction]);
  if (verdict === 'blocked') return `"${forms[0] ?? ''}" matches ffmpeg.access.${direction}.block`;
  if (verdict === 'not-allowed')
    return `"${forms[0] ?? ''}" matches nothing in ffmpeg.access.${direction}.allow`;
  return undefined;
}
