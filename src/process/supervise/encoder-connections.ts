import { readdir, readFile, readlink } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

/** The two ends of a TCP connection as the server's socket sees them. */
export interface ConnectionEnds {
  remoteAddress?: string;
  remotePort?: number;
  localPort?: number;
}

export interface EncoderConnectionsDeps {
  /** Root of the proc filesystem (`/proc`): the socket tables and the encoders' descriptors. */
  procRoot: string;
  /** The pids of the encoders running now. */
  encoderPids: () => ReadonlySet<number>;
}

/**
 * Tells whether a connection to this server was opened by one of its encoders, by finding the
 * client end's socket (its inode, `/proc/net/tcp{,6}`) among the encoders' descriptors
 * (`/proc/<pid>/fd`). This holds for every way an encoder may come to connect here (a host name
 * that resolves here, an HTTP redirect from an outside server, an address spelling the policy
 * misread), which the address check before the start cannot see.
 *
 * Only connections from this machine's own addresses are looked up, once per connection, and only
 * while encoders run. An encoder holds its socket open while it waits for the answer, so the
 * lookup cannot miss it.
 */
export class EncoderConnections {
  /** Per connection: the verdict, or its lookup while under way. */
  private readonly verdicts = new WeakMap<object, boolean | Promise<boolean>>();

  constructor(private readonly deps: EncoderConnectionsDeps) {}

  /**
   * Whether `socket` (the server's end) belongs to a connection an encoder opened: a boolean once
   * known (every request after a connection's first, and any connection while no encoder runs or
   * from another machine), a promise while the lookup is under way. Every request passes here, so
   * the known answer costs no promise.
   */
  fromEncoder(socket: ConnectionEnds & object): boolean | Promise<boolean> {
    const known = this.verdicts.get(socket);
    if (known !== undefined) return known;
    // Only a connection from this machine while an encoder runs can be an encoder's.
    const { remoteAddress, remotePort, localPort } = socket;
    const pids = this.deps.encoderPids();
    if (
      pids.size === 0 ||
      remotePort === undefined ||
      localPort === undefined ||
      remoteAddress === undefined ||
      !isThisMachine(remoteAddress)
    ) {
      this.verdicts.set(socket, false);
      return false;
    }
    const lookup = this.lookUp(pids, remotePort, localPort)
      .catch(() => false)
      .then((verdict) => {
        this.verdicts.set(socket, verdict);
        return verdict;
      });
    this.verdicts.set(socket, lookup);
    return lookup;
  }

  private async lookUp(pids: ReadonlySet<number>, remotePort: number, localPort: number): Promise<boolean> {
    const tables = await Promise.all(
      ['tcp', 'tcp6'].map((name) => readFile(join(this.deps.procRoot, 'net', name), 'utf8').catch(() => '')),
    );
    const sockets = new Set(tables.flatMap((table) => socketInodes(table, remotePort, localPort)));
    if (sockets.size === 0) return false;
    // The descriptors of every encoder at once: one after the other, a local client that is not
    // an encoder (a proxy, a scraper) waited for each encoder's round trips to the thread pool.
    const held = await Promise.all([...pids].map((pid) => holdsAnySocket(this.deps.procRoot, pid, sockets)));
    return held.includes(true);
  }
}

/**
 * The inodes of the sockets in a `/proc/net/tcp` or `tcp6` table whose local port is `localPort`
 * and remote port `remotePort` (ports are hexadecimal there; addresses are not compared: both ends
 * are on this machine, and a second match only makes the answer more careful).
 */
export function socketInodes(table: string, localPort: number, remotePort: number): string[] {
  const inodes: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const local = fields[1];
    const remote = fields[2];
    const inode = fields[9];
    if (local === undefined || remote === undefined || inode === undefined || inode === '0') continue;
    if (portOf(local) === localPort && portOf(remote) === remotePort) inodes.push(inode);
  }
  return inodes;
}

function portOf(endpoint: string): number {
  return parseInt(endpoint.slice(endpoint.lastIndexOf(':') + 1), 16);
}

async function holdsAnySocket(procRoot: string, pid: number, inodes: ReadonlySet<string>): Promise<boolean> {
  const dir = join(procRoot, String(pid), 'fd');
  const fds = await readdir(dir).catch(() => [] as string[]);
  const targets = await Promise.all(fds.map((fd) => readlink(join(dir, fd)).catch(() => '')));
  return targets.some((target) => {
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    return inode !== undefined && inodes.has(inode);
  });
}

/** A loopback address or one of this machine's interface addresses (IPv4-mapped ones too). */
function isThisMachine(address: string): boolean {
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '').toLowerCase();
  if (plain.startsWith('127.') || plain === '::1') return true;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((entry) => entry.address.toLowerCase() === plain),
  );
}
