/**
 * Option values read the way ffmpeg's AVOption parser reads them (libavutil/opt.c, avstring.c),
 * so that a check on a value cannot be passed by another spelling of the same value: `-safe 0`
 * is also `-safe false`, `no`, `OFF`, `00`, `-0`, `+0`, ` 0`, `''`, `no,` and `4294967296`.
 */

/**
 * The format `-f <text>` selects, by the one of its names that identifies it (lower case):
 * ffmpeg looks the text up with `av_match_name` against each format's comma-separated names
 * (`video4linux2,v4l2`), so `V4L2`, `video4linux2` and `video4linux2,v4l2` all open the v4l2
 * device. Where the text matches at all, its part before the first comma is one of those names.
 */
export function formatNameOf(text: string): string {
  const first = text.split(',')[0] as string;
  return first.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/** A boolean option's range (`AVOption.min` / `.max`); most are [0, 1], some allow -1 (auto). */
export interface BooleanRange {
  min: number;
  max: number;
}

/**
 * The value ffmpeg 5.1 to 7.1 sets an `AV_OPT_TYPE_BOOL` option to for `text` (`set_string_bool`),
 * or undefined where it refuses it ("Unable to parse option value … as boolean"):
 * - `auto` (exactly) is -1;
 * - a name of `true,y,yes,enable,enabled,on` is 1 and of `false,n,no,disable,disabled,off` is 0,
 *   matched as `av_match_name` does (see `matchesNameList`);
 * - anything else is a decimal integer as `strtol(text, &end, 10)` reads it, which must take the
 *   whole text: leading white space and a sign are taken, the empty text is 0, a number beyond
 *   64 bits is clamped, and the result is cut to the low 32 bits (`int`);
 * - and the result must lie in `range`.
 */
export function readBooleanOption(
  text: string,
  range: BooleanRange = { min: 0, max: 1 },
): number | undefined {
  let value: number | undefined;
  if (text === 'auto') value = -1;
  else if (matchesNameList(text, 'true,y,yes,enable,enabled,on')) value = 1;
  else if (matchesNameList(text, 'false,n,no,disable,disabled,off')) value = 0;
  else value = readWholeDecimalInt(text);
  if (value === undefined || value < range.min || value > range.max) return undefined;
  return value;
}

/**
 * `av_match_name(name, names)`: whether `name` matches an entry of the comma-separated `names`,
 * ASCII case ignored. ffmpeg compares `max(entry length, name length)` characters from the entry
 * on, running past its comma: so `no,` matches (`no,` of `no,disable`), and so does `n,no`.
 * (An entry starting with `-` negates; none of the lists read here has one.)
 */
export function matchesNameList(name: string, names: string): boolean {
  let at = 0;
  while (at < names.length) {
    const negate = names[at] === '-';
    const comma = names.indexOf(',', at);
    const end = comma === -1 ? names.length : comma;
    const start = at + (negate ? 1 : 0);
    const length = Math.max(end - start, name.length);
    if (equalsIgnoringAsciiCase(name, names.slice(start), length) !== negate) return true;
    at = comma === -1 ? names.length : comma + 1;
  }
  return false;
}

/** `av_strncasecmp(a, b, n) == 0` for NUL-terminated strings. */
function equalsIgnoringAsciiCase(a: string, b: string, n: number): boolean {
  for (let index = 0; index < n; index++) {
    const left = lowerAsciiAt(a, index);
    if (left !== lowerAsciiAt(b, index)) return false;
    if (left === 0) return true; // Both ended (a C string's NUL).
  }
  return true;
}

/** The code at `index`, A-Z lowered; 0 past the end, where a C string has its NUL. */
function lowerAsciiAt(text: string, index: number): number {
  if (index >= text.length) return 0;
  const code = text.charCodeAt(index);
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/** C's `isspace` in the C locale. */
const C_SPACE = /^[ \t\n\v\f\r]*/;
const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * `strtol(text, &end, 10)` stored in an `int`, when `end` is the text's end; else undefined.
 * With no digits `end` is the start, so only the empty text passes (as 0).
 */
function readWholeDecimalInt(text: string): number | undefined {
  if (text === '') return 0;
  const match = /^([+-]?)([0-9]+)$/.exec(text.replace(C_SPACE, ''));
  if (match === null) return undefined;
  let value = BigInt(match[2] as string);
  if (match[1] === '-') value = -value;
  // strtol clamps to long (64 bits here) on overflow; the int conversion keeps the low 32 bits.
  if (value > INT64_MAX) value = INT64_MAX;
  if (value < INT64_MIN) value = INT64_MIN;
  return Number(BigInt.asIntN(32, value));
}
