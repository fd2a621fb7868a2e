import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';

interface Member {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  child: ChildProcess | undefined;
}

/**
 * A real etcd cluster of `size` members on loopback (Debian's /usr/bin/etcd), each a child
 * process that can be killed and started again on the same data directory.
 */
export class EtcdMembers {
  private constructor(
    private readonly members: Member[],
    private readonly initialCluster: string,
  ) {}

  static async start(dir: string, size = 3): Promise<EtcdMembers> {
    const members: Member[] = [];
    for (let index = 0; index < size; index++) {
      const name = `m${index}`;
      members.push({
        name,
        clientUrl: `http://127.0.0.1:${await freePort()}`,
        peerUrl: `http://127.0.0.1:${await freePort()}`,
        dataDir: join(dir, name),
        child: undefined,
      });
    }
    const initialCluster = members.map((member) => `${member.name}=${member.peerUrl}`).join(',');
    const cluster = new EtcdMembers(members, initialCluster);
    for (let index = 0; index < size; index++) cluster.startMember(index);
    await cluster.waitHealthy(30_000);
    return cluster;
  }

  get endpoints(): string[] {
    return this.members.map((member) => member.clientUrl);
  }

  startMember(index: number): void {
    const member = this.members[index] as Member;
    member.child = spawn(
      '/usr/bin/etcd',
      [
        '--name',
        member.name,
        '--data-dir',
        member.dataDir,
        '--listen-client-urls',
        member.clientUrl,
        '--advertise-client-urls',
        member.clientUrl,
        '--listen-peer-urls',
        member.peerUrl,
        '--initial-advertise-peer-urls',
        member.peerUrl,
        '--initial-cluster',
        this.initialCluster,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'streamcore-test',
      ],
      { stdio: 'ignore' },
    );
  }

  async killMember(index: number): Promise<void> {
    const child = this.members[index]?.child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Every running member answers and one of them leads. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const running = this.members.filter((member) => member.child?.exitCode === null);
      const statuses = await Promise.all(running.map((member) => status(member.clientUrl)));
      if (statuses.every((leader) => leader !== undefined && leader !== '0')) return;
      if (Date.now() > deadline) throw new Error('etcd did not become healthy');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async stop(): Promise<void> {
    for (let index = 0; index < this.members.length; index++) await this.killMember(index);
  }
}

async function status(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/v3/maintenance/status`, {
      method: 'POST',
      body: '{}',
      signal: AbortSignal.timeout(1000),
    });
    const body = (await response.json()) as { leader?: string };
    return body.leader;
  } catch {
    return undefined;
  }
}
