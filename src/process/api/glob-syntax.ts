/**
 * Why `pattern` is not a well-formed glob, or `undefined` when it is: an unclosed `[` class, an
 * unclosed `{` or a `}` without its `{`, or a `\` that escapes nothing.
 *
 * The storage module's compiler is forgiving on purpose (a cleanup rule with a stray `[` matches
 * it literally). A glob that selects processes in a query is not: a typo there would silently
 * answer `[]`, so it is a 400 naming the parameter, as in the reference server (whose gobwas/glob
 * rejects these patterns). Errors the compiler itself finds (`[z-a]`) are reported by it.
 */
export function globSyntaxProblem(pattern: string): string | undefined {
  let open = 0;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      if (i === pattern.length - 1) return 'a trailing "\\" escapes nothing';
      i++;
    } else if (char === '[') {
      // As in storage/glob.ts: a `]` right after `[` (or `[!`) is a member, not the end.
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) return `"[" at position ${i + 1} is not closed`;
      i = end;
    } else if (char === '{') {
      open++;
    } else if (char === '}') {
      if (open === 0) return `"}" at position ${i + 1} closes nothing`;
      open--;
    }
  }
  return open > 0 ? '"{" is not closed' : undefined;
}
