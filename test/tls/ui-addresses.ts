/**
 * The public addresses the Restreamer UI shows once it runs against a server (restreamer-ui
 * `src/utils/restreamer.js`, the config part of `_init` and `GetPublicAddress`): the host it
 * reached the API by, or `host.name[0]` when that was an IP; `https` when it came over HTTPS or
 * `tls.enable`; RTMPS and its port when `rtmp.enable_tls`.
 */
export function uiAddresses(
  reached: string,
  config: {
    host: { name: string[] };
    tls: { enable: boolean };
    rtmp: { enable_tls: boolean; address: string; address_tls: string; app: string };
  },
): { http: string; hls: (channel: string) => string; rtmp: (channel: string) => string } {
  const address = new URL(reached);
  const isIp = /^[0-9.]+$/.test(address.hostname) || address.hostname.startsWith('[');
  const hostname = isIp && config.host.name.length > 0 ? (config.host.name[0] as string) : address.hostname;
  const secure = address.protocol === 'https:' || config.tls.enable;
  const port = address.port === '' ? (secure ? '443' : '80') : address.port;
  const httpHost =
    (secure && port !== '443') || (!secure && port !== '80') ? `${hostname}:${port}` : hostname;
  const scheme = secure ? 'https' : 'http';
  const rtmpPort =
    (config.rtmp.enable_tls ? config.rtmp.address_tls : config.rtmp.address).split(':').pop() ?? '';
  const app = config.rtmp.app === '/' ? '' : config.rtmp.app;
  return {
    http: `${scheme}://${httpHost}`,
    hls: (channel) => `${scheme}://${httpHost}/memfs/${channel}.m3u8`,
    rtmp: (channel) =>
      `rtmp${config.rtmp.enable_tls ? 's' : ''}://${hostname}${rtmpPort === '1935' ? '' : `:${rtmpPort}`}${app}/${channel}.stream`,
  };
}
