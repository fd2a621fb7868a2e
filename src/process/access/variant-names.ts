/**
 * Why a `-var_stream_map` value must not be used, or undefined. The hls muxer puts each variant's
 * `name:` where `%v` (any case) stands in the playlist, segment, init and subtitle file names, after
 * the policy checked them as written, and creates the directories it names. A name with a `/` or
 * `\` (ffmpeg's mkdir treats both as separators) would add directories, one of dots only (or empty)
 * could complete a `..` segment (`.%v.`, `%v%v`); any other name keeps each checked path's meaning.
 * `name:` is looked for anywhere, ended where hlsenc ends it (`,`, space, tab): a spelling ffmpeg
 * does not read as a name is at worst refused too.
 */
export function variantNamesRefusal(value: string): string | undefined {
  for (const match of value.matchAll(/name:([^,\t ]*)/g)) {
    const name = match[1] as string;
    if (/[/\\]/.test(name) || /^\.*$/.test(name)) {
      return `var_stream_map name "${name}" would be put into output names (%v): it must not contain / or \\ and not be only dots`;
    }
  }
  return undefined;
}
