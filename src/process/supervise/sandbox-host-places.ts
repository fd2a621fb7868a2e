import { readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Files of the host that ffmpeg's libraries read at run time, shown read-only to every encoder
 * where they exist (each at its own path; a link, such as a `resolv.conf` managed elsewhere,
 * shows its target's contents there). Nothing else of `/etc` or `/var` is shown: no
 * `/etc/ssl/private`, no `/etc/passwd`, no home directory.
 */
export const HOST_FILES: readonly string[] = [
  // The dynamic linker's cache and settings; Debian's library links point through alternatives
  // (libblas.so.3 → /etc/alternatives/… for ffmpeg 5.1 in bookworm).
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  // Name resolution (getaddrinfo) for network inputs and outputs.
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/nsswitch.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  // TLS: the CA certificates (Debian, Fedora layouts) and the TLS libraries' settings.
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/pki/tls/certs',
  '/etc/pki/tls/openssl.cnf',
  '/etc/pki/ca-trust/extracted',
  '/etc/gnutls',
  '/etc/crypto-policies',
  // Fonts (drawtext, subtitles): fontconfig's settings and its system caches.
  '/etc/fonts',
  '/var/cache/fontconfig',
  // Local time, for `-strftime` names.
  '/etc/localtime',
  '/etc/timezone',
];

/** The sticky bit of a mode (not in Node's `fs.constants`). */
const S_ISVTX = 0o1000;

/** Top-level directories of programs and libraries (`/usr`, `/bin`, `/sbin`, `/lib*`). */
const PROGRAM_ROOTS = /^(usr|bin|sbin|lib.*)$/;

/**
 * bwrap's arguments that show the host's programs and libraries: `/usr` and each `/bin`, `/sbin`,
 * `/lib*` read-only, or as the same link where it is one (merged `/usr`: `/lib -> usr/lib`).
 */
export function programRootArgs(root = '/'): string[] {
  const args: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!PROGRAM_ROOTS.test(entry.name)) continue;
    const path = `${root}${entry.name}`;
    if (entry.isSymbolicLink()) args.push('--symlink', readlinkSync(path), path);
    else if (entry.isDirectory()) args.push('--ro-bind', path, path);
  }
  return args;
}

/**
 * The place to show for an encoder binary outside the host's program directories (a build in
 * `/opt`, a stand-in under `/tmp`): its real file's directory, for the libraries and data a
 * build may keep beside it; only the file itself where that directory is the root or a shared
 * temporary directory (sticky, like `/tmp`), whose other entries are none of the encoder's.
 */
export function programPlace(program: string): string {
  const file = realpathSync(program);
  const dir = dirname(file);
  if (dir === '/') return file;
  try {
    return (statSync(dir).mode & S_ISVTX) !== 0 ? file : dir;
  } catch {
    return file;
  }
}
