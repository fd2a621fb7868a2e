/**
 * What `npm start` runs, read from package.json's `start` script: `node [flags] <entry>`. The
 * build's code-cache priming, the start-up and memory benchmarks and the start tests all run the
 * server the way users do, with these flags (V8 accepts a code cache only under the flags that
 * made it, and the flags change the memory figures).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PACKAGE = fileURLToPath(new URL('../package.json', import.meta.url));

export interface StartScript {
  /** The script as written. */
  text: string;
  /** Node's flags, in order (`--max-semi-space-size=1`, …). */
  flags: string[];
  /** The entry, relative to the checkout (`dist/main.js`). */
  entry: string;
}

/** Throws when the script is not `node [--flag …] <file>.js`: every reader relies on that shape. */
export function readStartScript(): StartScript {
  const text =
    (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { scripts: Record<string, string | undefined> }).scripts
      .start ?? '';
  const match = /^node ((?:--\S+ )*)(\S+\.js)$/.exec(text);
  if (match === null) throw new Error(`npm start runs "${text}", expected "node [--flag …] <file>.js"`);
  return { text, flags: (match[1] ?? '').split(' ').filter((flag) => flag !== ''), entry: match[2]! };
}
