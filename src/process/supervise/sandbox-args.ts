import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { HOST_FILES, programPlace, programRootArgs } from './sandbox-host-places.js';

/** What the encoder may read and write and must not see, asked at every start (directories come and go). */
export interface SandboxPlaces {
  /** Files and directories bound writable (the disk directory, `ffmpeg.access.output.paths`). */
  writable: () => readonly string[];
  /** Files and directories bound read-only (`ffmpeg.access.input.paths`). */
  readable: () => readonly string[];
  /** Files and directories hidden even inside the others (db, metrics history, config file, TLS key). */
  hidden: () => readonly string[];
  /** Give the encoder the host's `/dev` and `/sys` (devices allowed by `ffmpeg.access.devices`). */
  hostDevices: boolean;
}

/** The option whose value is the server's own `-vstats` FIFO (the policy forbids it to users). */
const VSTATS_OPTION = '-vstats_file';

interface Mount {
  path: string;
  args: string[];
  hide: boolean;
}

/**
 * bwrap's arguments for one encoder. The root is an empty read-only tmpfs in which only an
 * allow-list of the host is shown: programs and libraries read-only (`/usr`, `/bin`, `/sbin`,
 * `/lib*`), the few files of `/etc` and `/var` ffmpeg's libraries read (HOST_FILES), the
 * `program`'s place when it lies elsewhere (see `programPlace`), the readable places
 * read-only, the writable ones read-write, and the `-vstats` FIFO; the hidden places are covered
 * (an empty read-only tmpfs, or `/dev/null` over a file) wherever they are. Plus a private
 * `/dev`, `/proc` and `/tmp`, and the network as it is. (The server's `CORE_*` variables are gone
 * before bwrap starts, for every encoder, sandboxed or not: server-env.ts.)
 * `--unshare-pid` gives the encoder its own `/proc`, so it cannot reach the server's files
 * through `/proc/<server pid>/root` or `/fd`; `--as-pid-1` makes the encoder that namespace's
 * pid 1 (no bwrap init between), so the pid `--info-fd` reports is the encoder's. As pid 1 it
 * still gets the signals it handles (ffmpeg handles SIGINT and SIGTERM), and SIGKILL.
 * `program` (default: the command, when it is a path) is the binary whose place is shown.
 */
export function sandboxArgs(
  places: SandboxPlaces,
  infoFd: number,
  encoder: { command: string; args: readonly string[]; cwd?: string },
  program: string | undefined = encoder.command.includes('/') ? encoder.command : undefined,
): string[] {
  const mounts = placeMounts(places, program, vstatsFifo(encoder.args));
  const hiddenDirs = mounts
    .filter((mount) => mount.hide && mount.args[0] === '--tmpfs')
    .map((mount) => mount.path);
  return [
    '--die-with-parent',
    '--unshare-pid',
    '--unshare-ipc',
    '--as-pid-1',
    ...programRootArgs(),
    ...(places.hostDevices ? ['--dev-bind', '/dev', '/dev', '--ro-bind', '/sys', '/sys'] : ['--dev', '/dev']),
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...mounts.flatMap((mount) => mount.args),
    // The covering tmpfs would take writes (into memory), and so would the root's: read-only
    // once everything inside them is mounted.
    ...hiddenDirs.flatMap((dir) => ['--remount-ro', dir]),
    '--remount-ro',
    '/',
    ...(encoder.cwd !== undefined ? ['--chdir', encoder.cwd] : []),
    '--info-fd',
    String(infoFd),
    '--',
    encoder.command,
    ...encoder.args,
  ];
}

/**
 * The mounts of the places, outer ones first, so that one inside another is mounted over it (a
 * disk directory inside the db directory stays usable, a config file inside the disk directory
 * stays hidden); at the same place, hiding wins.
 */
function placeMounts(places: SandboxPlaces, program: string | undefined, fifo: string | undefined): Mount[] {
  // Host files at their own paths (a link's target shows there); `-try`: one may be missing.
  const mounts: Mount[] = HOST_FILES.map((path) => ({
    path,
    args: ['--ro-bind-try', path, path],
    hide: false,
  }));
  const writable = realPaths(places.writable());
  const readable = realPaths(places.readable());
  if (program !== undefined) {
    const place = programPlaceOrNothing(program);
    if (place !== undefined) readable.add(place);
  }
  for (const path of readable) {
    if (!writable.has(path)) mounts.push({ path, args: ['--ro-bind', path, path], hide: false });
  }
  for (const path of writable) mounts.push({ path, args: ['--bind', path, path], hide: false });
  if (fifo !== undefined) mounts.push({ path: fifo, args: ['--bind', fifo, fifo], hide: false });
  for (const place of places.hidden().flatMap(existing)) {
    mounts.push({
      path: place.path,
      args: place.stats.isDirectory() ? ['--tmpfs', place.path] : ['--ro-bind', '/dev/null', place.path],
      hide: true,
    });
  }
  return mounts.sort((a, b) => depth(a.path) - depth(b.path) || Number(a.hide) - Number(b.hide));
}

function programPlaceOrNothing(program: string): string | undefined {
  try {
    return programPlace(program);
  } catch {
    return undefined; // Gone: bwrap says so when it cannot run it.
  }
}

/** The server's `-vstats` FIFO in the command, when it is one (a regular file is never bound). */
function vstatsFifo(args: readonly string[]): string | undefined {
  const index = args.lastIndexOf(VSTATS_OPTION);
  const path = index === -1 ? undefined : args[index + 1];
  if (path === undefined) return undefined;
  try {
    return lstatSync(path).isFIFO() ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The real paths of the places that exist. */
function realPaths(places: readonly string[]): Set<string> {
  return new Set(places.flatMap(existing).map((place) => place.path));
}

/** `place` as its real path with its type, or nothing when it does not exist (yet). */
function existing(place: string): { path: string; stats: Stats }[] {
  try {
    const path = realpathSync(place);
    return [{ path, stats: lstatSync(path) }];
  } catch {
    return [];
  }
}

function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}
