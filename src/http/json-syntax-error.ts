/** Where a text stops being JSON, and why. */
export interface JsonSyntaxProblem {
  /** Index of the offending character in the text (UTF-16 code units); the text's length at its end. */
  offset: number;
  line: number;
  column: number;
  problem: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ['true', 'false', 'null'] as const;

/**
 * The detail of a 400 `Invalid JSON` (docs/api.md#conventions): what is wrong and where, e.g.
 * `expected ',' or ']' at line 1, column 13 (character 12)`.
 *
 * Node 20's `JSON.parse` messages give a position for some errors only, and quote the body for
 * others, so after a failed parse this scanner of the JSON grammar (RFC 8259) finds the position
 * itself. It is iterative, so a body of 64 KiB of `[` cannot exhaust the stack.
 */
export function describeJsonSyntaxError(text: string, parserMessage: string): string {
  const found = findJsonSyntaxError(text);
  if (found === undefined) return parserMessage;
  return `${found.problem} at line ${found.line}, column ${found.column} (character ${found.offset})`;
}

type Expecting = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'comma-or-close' | 'end';

/** The first syntax error of `text`, or undefined when it is one JSON value with white space around. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  const open: string[] = [];
  let expecting: Expecting = 'value';
  let i = 0;
  const fail = (offset: number, problem: string): JsonSyntaxProblem => at(text, offset, problem);
  const afterValue = (): Expecting => (open.length === 0 ? 'end' : 'comma-or-close');

  for (;;) {
    i = skipWhiteSpace(text, i);
    if (i >= text.length) return expecting === 'end' ? undefined : fail(i, 'unexpected end of input');
    const char = text[i] ?? '';
    switch (expecting) {
      case 'end':
        return fail(i, `unexpected ${show(char)} after the JSON value`);
      case 'colon':
        if (char !== ':') return fail(i, `expected ':' after the property name, found ${show(char)}`);
        i++;
        expecting = 'value';
        break;
      case 'comma-or-close': {
        const closer = open.at(-1) === '{' ? '}' : ']';
        if (char === ',') {
          i++;
          expecting = closer === '}' ? 'key' : 'value';
        } else if (char === closer) {
          open.pop();
          i++;
          expecting = afterValue();
        } else {
          return fail(i, `expected ',' or '${closer}', found ${show(char)}`);
        }
        break;
      }
      case 'key':
      case 'key-or-close':
        if (char === '}' && expecting === 'key-or-close') {
          open.pop();
          i++;
          expecting = afterValue();
          break;
        }
        if (char !== '"') return fail(i, `expected a property name in double quotes, found ${show(char)}`);
        {
          const end = scanString(text, i);
          if (typeof end !== 'number') return end;
          i = end;
        }
        expecting = 'colon';
        break;
      case 'value':
      case 'value-or-close': {
        if (char === ']' && expecting === 'value-or-close') {
          open.pop();
          i++;
          expecting = afterValue();
          break;
        }
        if (char === '{' || char === '[') {
          open.push(char);
          i++;
          expecting = char === '{' ? 'key-or-close' : 'value-or-close';
          break;
        }
        const end = scanScalar(text, i);
        if (typeof end !== 'number') return end;
        i = end;
        expecting = afterValue();
        break;
      }
    }
  }
}

/** The end of the string, number or literal at `start`, or the problem. */
function scanScalar(text: string, start: number): number | JsonSyntaxProblem {
  const char = text[start] ?? '';
  if (char === '"') return scanString(text, start);
  for (const literal of LITERALS) {
    if (text.startsWith(literal, start)) return start + literal.length;
  }
  NUMBER.lastIndex = start;
  if (NUMBER.test(text)) return NUMBER.lastIndex;
  return at(text, start, `unexpected ${show(char)} where a value was expected`);
}

/** The index after the closing quote of the string that opens at `start`, or the problem. */
function scanString(text: string, start: number): number | JsonSyntaxProblem {
  for (let i = start + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) return i + 1;
    if (code < 0x20) return at(text, i, 'control character in a string (escape it)');
    if (code === 0x5c /* \ */) {
      const escape = text[i + 1] ?? '';
      if (escape === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          return at(text, i, 'bad \\u escape: four hex digits expected');
        }
        i += 5;
      } else if ('"\\/bfnrt'.includes(escape) && escape !== '') {
        i += 1;
      } else {
        return at(text, i, `bad escape ${show(`\\${escape}`)}`);
      }
    }
  }
  return at(text, text.length, 'unterminated string');
}

function skipWhiteSpace(text: string, start: number): number {
  let i = start;
  for (;;) {
    const code = text.charCodeAt(i);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return i;
    i++;
  }
}

function at(text: string, offset: number, problem: string): JsonSyntaxProblem {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { offset, line, column: offset - lineStart + 1, problem };
}

/** A character for a message: quoted, with invisible ones spelled out. */
function show(text: string): string {
  return JSON.stringify(text).replace(/^"|"$/g, "'");
}
