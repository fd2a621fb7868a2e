import { isExecutable } from './executable.js';
import type { SpawnFn } from './spawn.js';

/**
 * Node has no `prctl(PR_SET_PDEATHSIG)`, so encoders are started through util-linux's `setpriv
 * --pdeathsig TERM`, which sets it and then execs the encoder in the same process (same pid): when
 * the server dies, even by `kill -9`, the kernel sends each encoder SIGTERM. ffmpeg ignores SIGPIPE,
 * so without this it would keep running after its progress pipe closed.
 */
export function withParentDeathSignal(spawn: SpawnFn, setpriv: string): SpawnFn {
  return (command, args, options) =>
    // A command that cannot run is spawned directly, so that it fails the way it always did
    // (an `error` event with ENOENT/EACCES) rather than as setpriv's exit code 127.
    isExecutable(command, options.env?.PATH ?? process.env.PATH ?? '')
      ? spawn(setpriv, ['--pdeathsig', 'TERM', '--', command, ...args], options)
      : spawn(command, args, options);
}

/**
 * Whether `setpriv --pdeathsig` works here (util-linux is essential in Debian, but containers
 * and other systems may lack it). Runs `setpriv --pdeathsig TERM -- true` once.
 */
export function probeParentDeathSignal(spawn: SpawnFn, setpriv: string, timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(ok);
    };
    const child = spawn(setpriv, ['--pdeathsig', 'TERM', '--', 'true'], { stdio: 'ignore' });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(false);
    }, timeoutMs);
    child.once('error', () => finish(false));
    child.once('exit', (code) => finish(code === 0));
  });
}
