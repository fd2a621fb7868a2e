import { getPath, setPath } from '../../src/config/index.js';

/** The keys the UI's Settings screen edits (its `configValues`): it leaves out those an env var sets. */
export const UI_KEYS = [
  'log.level',
  'log.max_lines',
  'host.name',
  'tls.address',
  'tls.auto',
  'tls.email',
  'api.auth.enable',
  'api.auth.username',
  'api.auth.password',
  'rtmp.enable',
  'rtmp.enable_tls',
  'rtmp.address',
  'rtmp.address_tls',
  'rtmp.app',
  'rtmp.token',
  'ffmpeg.log.max_lines',
  'ffmpeg.log.max_history',
  'srt.enable',
  'srt.address',
  'srt.passphrase',
  'srt.token',
  'storage.cors.origins',
  'storage.disk.max_size_mbytes',
  'storage.memory.auth.enable',
  'storage.memory.auth.username',
  'storage.memory.auth.password',
  'storage.memory.max_size_mbytes',
  'storage.memory.purge',
  'sessions.enable',
  'sessions.ip_ignorelist',
  'sessions.session_timeout_sec',
  'sessions.persist',
  'sessions.max_bitrate_mbit',
  'sessions.max_sessions',
  'service.enable',
  'service.token',
];

export type Layout = Record<string, unknown>;

const ADDRESSES = ['address', 'tls.address', 'rtmp.address', 'rtmp.address_tls', 'srt.address'];
const TEXT_LISTS: [string, string][] = [
  ['host.name', ','],
  ['storage.disk.cache.types.allow', '\n'],
  ['storage.disk.cache.types.block', '\n'],
  ['sessions.ip_ignorelist', '\n'],
];
const NUMBER_INPUTS = [
  'log.max_lines',
  'ffmpeg.log.max_lines',
  'ffmpeg.log.max_history',
  'storage.disk.max_size_mbytes',
  'storage.memory.max_size_mbytes',
  'sessions.session_timeout_sec',
  'sessions.max_bitrate_mbit',
  'sessions.max_sessions',
];

function update(layout: Layout, path: string, change: (value: unknown) => unknown): void {
  setPath(layout, path, change(getPath(layout, path)));
}

function lines(value: unknown, separator: string): string[] {
  return String(value)
    .split(separator)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * The body the Restreamer UI's Settings screen sends (restreamer-ui `src/views/Settings.js`: `load`
 * turns lists into text and keeps only the port of each address; `handleSave` turns them back and
 * leaves out the keys env vars set), after `edit` changed one field as a form input does.
 */
export function uiSettingsSave(
  answer: { config: Layout; overrides: string[] },
  edit: (form: Layout) => void,
): Layout {
  const form = structuredClone(answer.config);
  for (const [path, separator] of TEXT_LISTS) {
    update(form, path, (list) => (list as string[]).join(separator === ',' ? ', ' : separator));
  }
  const origins = getPath(form, 'storage.cors.origins') as string[];
  setPath(form, 'storage.cors.allow_all', origins.length === 1 && origins[0] === '*');
  setPath(form, 'storage.cors.origins', origins.join('\n'));
  if (getPath(form, 'tls.enable') === false) setPath(form, 'tls.auto', false);
  for (const path of ADDRESSES) update(form, path, (address) => String(address).split(':').join(''));
  edit(form);

  const sent = structuredClone(form);
  for (const [path, separator] of TEXT_LISTS) update(sent, path, (text) => lines(text, separator));
  const allowAll = getPath(sent, 'storage.cors.allow_all') === true;
  update(sent, 'storage.cors.origins', (text) => (allowAll ? ['*'] : lines(text, '\n')));
  delete (getPath(sent, 'storage.cors') as Layout).allow_all;
  for (const path of NUMBER_INPUTS) {
    update(sent, path, (value) =>
      typeof value === 'string' ? (value === '' ? 0 : Number.parseInt(value, 10)) : value,
    );
  }
  for (const path of ADDRESSES) update(sent, path, (port) => `:${String(port)}`);
  update(sent, 'rtmp.app', (app) => (String(app).startsWith('/') ? app : `/${String(app)}`));
  setPath(sent, 'tls.enable', getPath(sent, 'tls.auto') === true);
  for (const path of answer.overrides.filter((key) => UI_KEYS.includes(key))) {
    const parts = path.split('.');
    delete (getPath(sent, parts.slice(0, -1).join('.')) as Layout)[parts[parts.length - 1] as string];
  }
  return sent;
}
