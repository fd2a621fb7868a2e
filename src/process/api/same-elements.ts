/**
 * Whether two arrays hold the same elements in the same order, by `===`: the test of whether a
 * kept encoding still holds (a list's pieces, which are the same objects until what they encode
 * changes; a command line's strings).
 */
export function sameElements<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
