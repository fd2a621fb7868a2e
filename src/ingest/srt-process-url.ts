import type { Config } from '../config/index.js';
import { processUrlHost } from './rtmp-process-url.js';

/** Latency the placeholder asks for unless `latency=` is given: 20 ms in µs, as the reference. */
const DEFAULT_LATENCY_US = '20000';

/**
 * `{srt,name=<name>,mode=<publish|request>}` (datarhei Core `app/api/api.go`): the caller URL a
 * process publishes to or plays from. `mode` may be left out: an output publishes, an input
 * requests, as in the reference (which always decides by the section). `latency=` (µs) overrides
 * the default. Token and passphrase are written raw because ffmpeg reads srt:// options raw;
 * the config refuses values that would break the URL. `token` is the one to write when
 * `srt.token` is set: an encoder run's own (stream-grants.ts), else `srt.token` itself.
 */
export function srtProcessUrl(
  options: Config['srt'],
  boundPort: number | undefined,
  params: Readonly<Record<string, string>>,
  section: 'input' | 'output' | 'global',
  token: string = options.token,
): string {
  const { host, port } = processUrlHost(options.address, boundPort, 6000);
  const mode =
    params.mode === 'publish' || params.mode === 'request'
      ? params.mode
      : section === 'output'
        ? 'publish'
        : 'request';
  let url =
    `srt://${host}:${port}?mode=caller&transtype=live&latency=${params.latency ?? DEFAULT_LATENCY_US}` +
    `&streamid=${params.name ?? '{name}'},mode:${mode}`;
  if (options.token !== '') url += `,token:${token}`;
  if (options.passphrase !== '') url += `&passphrase=${options.passphrase}`;
  return url;
}
