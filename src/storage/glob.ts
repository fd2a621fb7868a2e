import { RE2JS } from 're2js';

/**
 * A compiled file-name glob (docs/processes.md#states-orders-and-supervision cleanup rules, docs/storage.md#the-contract listing): `*` matches within one path
 * segment, `**` across segments, `?` one character other than `/`, `[abc]`/`[!abc]` a class,
 * `{a,b}` alternatives. Compiled to RE2 so that a user's pattern can never backtrack
 * exponentially on a long file name.
 */
export interface Glob {
  matches(path: string): boolean;
}

export function compileGlob(pattern: string): Glob {
  const regex = RE2JS.compile(`^${globToRegex(pattern)}$`);
  return { matches: (path) => regex.matches(path) };
}

/** The regular-expression source equivalent to `pattern` (exported for tests). */
export function globToRegex(pattern: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char === '*') {
      if (pattern[i + 1] === '*') {
        // `**/` also matches zero directories, so `/a/**/b` matches `/a/b`.
        if (pattern[i + 2] === '/') {
          out += '(?:.*/)?';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else {
        out += '[^/]*';
      }
    } else if (char === '?') {
      out += '[^/]';
    } else if (char === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replaceAll('\\', '\\\\').replaceAll('[', '\\[')}]`;
      i = end;
    } else if (char === '{') {
      braces++;
      out += '(?:';
    } else if (char === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (char === ',' && braces > 0) {
      out += '|';
    } else if (char === '\\' && i + 1 < pattern.length) {
      i++;
      out += RE2JS.quote(pattern[i] as string);
    } else {
      out += RE2JS.quote(char);
    }
  }
  // An unclosed `{` is taken literally rather than rejected: close the groups it opened.
  return out + ')'.repeat(braces);
}
