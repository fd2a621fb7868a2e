/**
 * An upper estimate of the RE2 program size (instructions) a pattern compiles to, from its text
 * alone, so a pattern too large to be worth compiling is refused before compiling it: compiling
 * costs a few µs per instruction, and `(?:.{0,999}a)` repeated 70 times (910 characters) compiles
 * to 140 000 instructions in about half a second.
 *
 * Counted: one instruction per literal, class or escape; two per group, alternative and `*+?`;
 * a counted repetition `x{n,m}` as `max(n,m)` copies of `x` plus two per copy. Nested repetitions
 * multiply. This overestimates (re2js measured 2 001 for `.{0,999}a`, estimated 2 998), never by
 * less than the real size for the constructs that expand (counted repetition). Malformed text is
 * estimated as literals; the compiler reports the syntax error.
 */
export function estimateProgramSize(pattern: string): number {
  // Per open group: the size so far, and the size of its last atom (what a repetition applies to).
  const totals: number[] = [0];
  const lasts: number[] = [0];
  const add = (size: number): void => {
    totals[totals.length - 1]! += size;
    lasts[lasts.length - 1] = size;
  };
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '\\') {
      const end = skipEscape(pattern, i);
      // `\Q…\E` quotes literals: one instruction each.
      add(pattern[i + 1] === 'Q' ? end - i : 1);
      i = end;
    } else if (char === '[') {
      i = skipClass(pattern, i);
      add(1);
    } else if (char === '(') {
      totals.push(0);
      lasts.push(0);
      i++;
    } else if (char === ')' && totals.length > 1) {
      const inner = totals.pop()!;
      lasts.pop();
      add(inner + 2);
      i++;
    } else if (char === '|') {
      totals[totals.length - 1]! += 2;
      lasts[lasts.length - 1] = 0;
      i++;
    } else if (char === '*' || char === '+' || char === '?') {
      totals[totals.length - 1]! += 2;
      i++;
    } else if (char === '{') {
      const repeat = /^\{(\d{1,7})(,(\d{0,7}))?\}/.exec(pattern.slice(i, i + 20));
      if (repeat === null) {
        add(1);
        i++;
        continue;
      }
      const count = Math.max(1, Number(repeat[1]), Number(repeat[3] ?? 0));
      const last = lasts[lasts.length - 1]!;
      // The atom is there once already; the repetition adds count − 1 copies and two per copy.
      totals[totals.length - 1]! += last * (count - 1) + 2 * count;
      lasts[lasts.length - 1] = last * count + 2 * count;
      i += repeat[0].length;
    } else {
      add(1);
      i++;
    }
  }
  let size = 0;
  for (const total of totals) size += total + 2;
  return size;
}

/** Index after an escape at `i`: `\x`, `\pL`, `\p{Greek}`, `\x{10FFFF}`, `\Q…\E` (as one atom). */
function skipEscape(pattern: string, i: number): number {
  const next = pattern[i + 1];
  if ((next === 'p' || next === 'P' || next === 'x') && pattern[i + 2] === '{') {
    const close = pattern.indexOf('}', i + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  if (next === 'Q') {
    const close = pattern.indexOf('\\E', i + 2);
    return close < 0 ? pattern.length : close + 2;
  }
  return Math.min(pattern.length, i + (next === 'p' || next === 'P' ? 3 : 2));
}

/** Index after a bracketed class starting at `i` (`[]a]`, `[^]a]`, `[[:alpha:]]` and escapes included). */
function skipClass(pattern: string, i: number): number {
  let j = i + 1;
  if (pattern[j] === '^') j++;
  if (pattern[j] === ']') j++;
  while (j < pattern.length) {
    const char = pattern[j]!;
    if (char === '\\') j += 2;
    else if (char === '[' && pattern[j + 1] === ':') {
      const close = pattern.indexOf(':]', j + 2);
      j = close < 0 ? j + 1 : close + 2;
    } else if (char === ']') return j + 1;
    else j++;
  }
  return pattern.length;
}
