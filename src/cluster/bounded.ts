/**
 * Runs `work` on each item, at most `limit` at once, in the items' order of starting; stops
 * starting new ones once `mayStart` says no. Resolves when every started one has settled (a
 * failure is the work's own to report: `work` must not throw).
 */
export async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  mayStart: () => boolean = () => true,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && mayStart()) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
}
