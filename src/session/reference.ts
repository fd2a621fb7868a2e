/**
 * The reference of an HLS session: the playlist's file name without extension, so that
 * `{memfs}/{processid}.m3u8` (the usual output of a process) is referenced by its process id.
 */
export function referenceOf(urlPath: string): string {
  const name = urlPath.slice(urlPath.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
