import { Agent, request } from 'node:http';

/** What one simulated viewer saw. */
export interface PlayerReport {
  /** The session id the server handed over in its master playlist (undefined when none). */
  sessionId: string | undefined;
  playlists: number;
  segments: number;
  /** Body bytes received. */
  bytes: number;
  /** Times the simulated buffer ran dry after playback started. */
  stalls: number;
  /** Non-2xx answers and network errors. */
  errors: number;
  /** Status of the first (master) request. */
  firstStatus: number;
}

export interface PlayerOptions {
  /** Source address of the viewer's connections (e.g. `127.0.0.2`, outside the default ignore list). */
  localAddress?: string;
  /** Segments to start behind the live edge, as players do (hls.js: 3). */
  liveSyncSegments?: number;
  /** Told every body's size as it arrives (a live counter for benchmarks). */
  onBytes?: (bytes: number) => void;
  signal: AbortSignal;
}

/**
 * A simulated HLS player: fetches the playlist (following a master playlist to its first variant),
 * reloads the media playlist about every target duration, fetches each new segment once, and keeps
 * a simulated buffer (segment durations in, wall time out) to count stalls. Keep-alive connections,
 * like a browser. Stops when `signal` aborts.
 */
export async function playHls(url: string, options: PlayerOptions): Promise<PlayerReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: 2, localAddress: options.localAddress });
  const report: PlayerReport = {
    sessionId: undefined,
    playlists: 0,
    segments: 0,
    bytes: 0,
    stalls: 0,
    errors: 0,
    firstStatus: 0,
  };
  const received = (bytes: number): void => {
    report.bytes += bytes;
    options.onBytes?.(bytes);
  };
  try {
    const first = await get(agent, url);
    report.firstStatus = first.status;
    received(first.body.length);
    if (first.status !== 200) {
      report.errors++;
      return report;
    }
    let mediaUrl = url;
    let text = first.body.toString('utf8');
    if (text.includes('#EXT-X-STREAM-INF')) {
      const variant = uris(text)[0];
      if (variant === undefined) throw new Error('master playlist without variants');
      mediaUrl = new URL(variant, url).toString();
      report.sessionId = new URL(mediaUrl).searchParams.get('session') ?? undefined;
      text = '';
    }
    const fetched = new Set<string>();
    let bufferSec = 0;
    let playing = false;
    let last = Date.now();
    let firstLoad = true;
    while (!options.signal.aborted) {
      if (text === '') {
        const response = await get(agent, mediaUrl);
        received(response.body.length);
        if (response.status !== 200) {
          report.errors++;
          await sleep(500, options.signal);
          continue;
        }
        report.playlists++;
        text = response.body.toString('utf8');
      }
      const target = Number(/#EXT-X-TARGETDURATION:(\d+(?:\.\d+)?)/.exec(text)?.[1] ?? '2');
      let segments = segmentsOf(text);
      if (firstLoad) {
        segments
          .slice(0, Math.max(0, segments.length - (options.liveSyncSegments ?? 3)))
          .forEach((s) => fetched.add(s.uri));
        firstLoad = false;
      }
      segments = segments.filter((segment) => !fetched.has(segment.uri));
      text = '';
      for (const segment of segments) {
        if (options.signal.aborted) break;
        fetched.add(segment.uri);
        const response = await get(agent, new URL(segment.uri, mediaUrl).toString());
        if (response.status !== 200) {
          report.errors++;
          continue;
        }
        report.segments++;
        received(response.body.length);
        const now = Date.now();
        if (playing) {
          bufferSec -= (now - last) / 1000;
          if (bufferSec < 0) {
            report.stalls++;
            bufferSec = 0;
          }
        }
        last = now;
        bufferSec += segment.durationSec;
        playing = true;
      }
      await sleep(Math.max(250, (target * 1000) / 2), options.signal);
      if (playing) {
        const now = Date.now();
        bufferSec -= (now - last) / 1000;
        last = now;
        if (bufferSec < -target) {
          report.stalls++;
          bufferSec = 0;
        }
      }
    }
    return report;
  } catch (error) {
    if (!options.signal.aborted) report.errors++;
    void error;
    return report;
  } finally {
    agent.destroy();
  }
}

function uris(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function segmentsOf(text: string): { uri: string; durationSec: number }[] {
  const out: { uri: string; durationSec: number }[] = [];
  let duration = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line !== '' && !line.startsWith('#')) out.push({ uri: line, durationSec: duration });
  }
  return out;
}

function get(agent: Agent, url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`timeout fetching ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
