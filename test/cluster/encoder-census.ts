import { readdir, readFile } from 'node:fs/promises';

/**
 * The marker a test process carries in its encoder's command line (`-metadata title=<marker>`),
 * with this test run's pid: another run on the same machine (another worktree) has encoders with
 * the same process ids, which must not count as duplicates here.
 */
const PREFIX = `cluster-test-${process.pid}-`;
export const marker = (id: string): string => `${PREFIX}${id}`;

/** The running encoders of the test's processes, by process id: their pids, read from /proc. */
export async function encodersByProcess(): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = (await readFile(`/proc/${name}/cmdline`, 'utf8')).split('\0');
      // A zombie (exited, not yet reaped) runs nothing.
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
    } catch {
      continue;
    }
    if (!(argv[0] ?? '').endsWith('ffmpeg')) continue;
    const title = argv.find((arg) => arg.startsWith(`title=${PREFIX}`));
    if (title === undefined) continue;
    const id = title.slice(`title=${PREFIX}`.length);
    found.set(id, [...(found.get(id) ?? []), Number(name)]);
  }
  return found;
}

/**
 * Samples the encoders every few tens of ms until stopped and remembers every moment two
 * encoders ran for one process; a stopped (SIGSTOP) encoder counts, it would go on when resumed.
 */
export class DuplicateChecker {
  readonly duplicates: string[] = [];
  samples = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor() {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const census = await encodersByProcess();
      this.samples++;
      for (const [id, pids] of census)
        if (pids.length > 1)
          this.duplicates.push(`${new Date().toISOString()} ${id}: pids ${pids.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}
