/**
 * Pure functions over HLS playlists (RFC 8216): recognise a master playlist, list and rewrite the
 * URIs a playlist references, and build the small master playlist of the session hand-off.
 */

/** `URI="…"` attributes of tags such as EXT-X-MAP, EXT-X-KEY and EXT-X-MEDIA. */
const URI_ATTRIBUTE = /URI="([^"]*)"/g;

export function isMasterPlaylist(text: string): boolean {
  return text.includes('#EXT-X-STREAM-INF');
}

/** The URI lines (segments, or variant playlists of a master) in order, without tag attributes. */
export function playlistUris(text: string): string[] {
  const uris: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line !== '' && !line.startsWith('#')) uris.push(line);
  }
  return uris;
}

/** Segments with their `#EXTINF` duration in seconds, in order. */
export function playlistSegments(text: string): { uri: string; durationSec: number }[] {
  const segments: { uri: string; durationSec: number }[] = [];
  let duration = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXTINF:')) {
      duration = Number.parseFloat(line.slice('#EXTINF:'.length));
      if (!Number.isFinite(duration) || duration < 0) duration = 0;
    } else if (line !== '' && !line.startsWith('#')) {
      segments.push({ uri: line, durationSec: duration });
      duration = 0;
    }
  }
  return segments;
}

/** Applies `rewrite` to every URI line and every `URI="…"` attribute; keeps everything else. */
export function rewritePlaylistUris(text: string, rewrite: (uri: string) => string): string {
  return text
    .split('\n')
    .map((raw) => {
      const line = raw.trimEnd();
      if (line === '') return raw;
      if (line.startsWith('#'))
        return line.replace(URI_ATTRIBUTE, (_all, uri: string) => `URI="${rewrite(uri)}"`);
      return rewrite(line.trim());
    })
    .join('\n');
}

/**
 * Adds `key=value` to a URI's query. URIs with a scheme point to other servers and stay as they
 * are, and so do `data:` URIs.
 */
export function addQueryParam(uri: string, key: string, value: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) return uri;
  const hash = uri.indexOf('#');
  const base = hash === -1 ? uri : uri.slice(0, hash);
  const fragment = hash === -1 ? '' : uri.slice(hash);
  const separator = base.includes('?') ? '&' : '?';
  return `${base}${separator}${encodeURIComponent(key)}=${encodeURIComponent(value)}${fragment}`;
}

/**
 * Resolves a URI of a playlist served at `playlistPath` (a URL path such as `/memfs/a/live.m3u8`)
 * to the URL path it names, without query. `undefined` for URIs with a scheme.
 */
export function resolvePlaylistUri(playlistPath: string, uri: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) return undefined;
  const resolved = new URL(uri, `http://host${playlistPath}`);
  return decodeURIComponentSafe(resolved.pathname);
}

function decodeURIComponentSafe(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The master playlist of the session hand-off: one variant, `uri`, with `bandwidthBitPerSec` as
 * its declared peak (players use it only to choose among variants; there is just one).
 */
export function handOffMasterPlaylist(uri: string, bandwidthBitPerSec: number): string {
  const bandwidth = Math.max(1, Math.round(bandwidthBitPerSec));
  return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth}\n${uri}\n`;
}
