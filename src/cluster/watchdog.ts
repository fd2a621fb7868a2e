import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A small process beside the server that kills the server's children (the encoders) when the
 * server stops renewing its deadline: a server that is paused (SIGSTOP), or whose event loop
 * hangs, cannot stop its encoders itself, and the cluster moves them once its lease is gone.
 * It is told "kill in N ms unless told again" as lines on its stdin; it exits when stdin closes
 * (the server died: its encoders die by their parent-death signal).
 */
const WATCHDOG_SOURCE = String.raw`
const fs = require('node:fs');
const parent = process.ppid;
let timer;
function killChildren() {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let stat;
    try { stat = fs.readFileSync('/proc/' + name + '/stat', 'utf8'); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== parent) continue;
    try { process.kill(-pid, 'SIGKILL'); } catch {}
    try { process.kill(pid, 'SIGKILL'); } catch {}
  }
}
let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
    const ms = Number(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    clearTimeout(timer);
    if (ms >= 0) timer = setTimeout(killChildren, ms);
  }
});
process.stdin.on('end', () => process.exit(0));
`;

export interface Watchdog {
  /** The server's children are killed in `ms` unless armed again (negative: never). */
  arm(ms: number): void;
  close(): void;
}

export function startWatchdog(): Watchdog {
  const child: ChildProcess = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
    stdio: ['pipe', 'ignore', 'inherit'],
    env: { PATH: process.env.PATH ?? '' },
  });
  child.stdin?.on('error', () => undefined);
  return {
    arm: (ms) => child.stdin?.write(`${Math.floor(ms)}\n`),
    close: () => child.stdin?.end(),
  };
}
