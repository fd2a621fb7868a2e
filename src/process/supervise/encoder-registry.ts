import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { makeDirectory } from '../../persistence/make-dir.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { encoderPidOf, type SpawnFn } from './spawn.js';

export interface EncoderRegistryDeps {
  /** Where one file per running encoder is kept (`<db.dir>/encoders`). */
  dir: string;
  procRoot: string;
  logger: Logger;
  /** Sends a signal to a pid (`process.kill`), injectable for tests. */
  kill: (pid: number, signal: NodeJS.Signals) => void;
  /** How long a survivor gets after SIGTERM before SIGKILL, ms. */
  graceMs?: number;
}

interface Entry {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells a reused pid from ours. */
  start: string;
}

/**
 * Remembers the pid of every running encoder in the db directory, so that a server restarted after
 * a crash can stop encoders that outlived it (stopped ones do not act on the parent-death signal)
 * before it starts its own beside them. A file is removed when its encoder exits.
 */
export class EncoderRegistry {
  private readonly running = new Set<number>();
  private readonly changeListeners: (() => void)[] = [];

  constructor(private readonly deps: EncoderRegistryDeps) {}

  /** The pids of the encoders running now (inside a sandbox the encoders', not bwrap's). */
  runningPids(): ReadonlySet<number> {
    return this.running;
  }

  /** Calls `listener` whenever an encoder is recorded or exits (the API workers follow the set). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Wraps `spawn` so every child is recorded while it runs. */
  wrap(spawn: SpawnFn): SpawnFn {
    return (command, args, options) => {
      const child = spawn(command, args, options);
      child.once('spawn', () => void encoderPidOf(child).then((pid) => this.record(child, pid)));
      return child;
    };
  }

  /**
   * Stops every recorded encoder that is still the same process (pid and start time match):
   * SIGTERM, then SIGKILL after the grace time. Returns the pids it stopped.
   */
  async stopSurvivors(): Promise<number[]> {
    const names = await readdir(this.deps.dir).catch(() => [] as string[]);
    const stopped: number[] = [];
    for (const name of names.filter((file) => /^\d+$/.test(file))) {
      const file = join(this.deps.dir, name);
      const entry = await readEntry(file);
      if (entry !== undefined && (await this.startOf(entry.pid)) === entry.start) {
        this.deps.logger.warn({ pid: entry.pid }, 'stopping an encoder left running by a previous server');
        await this.stop(entry.pid, entry.start);
        stopped.push(entry.pid);
      }
      await rm(file, { force: true });
    }
    return stopped;
  }

  /** Records the encoder's pid (inside a sandbox the encoder's, not bwrap's: bwrap dies with it). */
  private record(child: ChildProcess, pid: number | undefined): void {
    // Gone before its pid was known (a sandbox that failed): nothing to record, nothing to remove.
    if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.running.add(pid);
    for (const listener of this.changeListeners) listener();
    const file = join(this.deps.dir, String(pid));
    const written = (async () => {
      const start = await this.startOf(pid);
      if (start === undefined) return;
      await makeDirectory(this.deps.dir);
      await writeFile(file, JSON.stringify({ pid, start } satisfies Entry), { mode: 0o600 });
    })().catch((error: unknown) =>
      this.deps.logger.warn(
        { err: error, pid },
        'cannot record the encoder pid; a crash may leave it running',
      ),
    );
    child.once('exit', () => {
      this.running.delete(pid);
      for (const listener of this.changeListeners) listener();
      void written.then(() => rm(file, { force: true })).catch(() => undefined);
    });
  }

  private async stop(pid: number, start: string): Promise<void> {
    this.signal(pid, 'SIGTERM');
    // A stopped process acts on nothing but SIGKILL; SIGCONT lets it take the SIGTERM.
    this.signal(pid, 'SIGCONT');
    const deadline = Date.now() + (this.deps.graceMs ?? 2000);
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if ((await this.startOf(pid)) !== start) return;
    }
    this.signal(pid, 'SIGKILL');
  }

  private signal(pid: number, signal: NodeJS.Signals): void {
    try {
      this.deps.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }

  /** The start time of a live pid, undefined when there is none (a zombie counts as gone). */
  private async startOf(pid: number): Promise<string | undefined> {
    const text = await readFile(join(this.deps.procRoot, String(pid), 'stat'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    return fields[19];
  }
}

async function readEntry(file: string): Promise<Entry | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<Entry>;
    return typeof parsed.pid === 'number' && typeof parsed.start === 'string'
      ? { pid: parsed.pid, start: parsed.start }
      : undefined;
  } catch {
    return undefined;
  }
}
