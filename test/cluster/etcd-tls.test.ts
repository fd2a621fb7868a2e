// test-alone: a real etcd and three streamcore nodes, each a child process
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';
import { startNode, type ClusterNode } from './cluster-nodes.js';
import { certificateAuthority, signedBy, TlsEtcd, type Pem } from './etcd-tls.js';

interface About {
  status?: string;
  degraded_error?: string;
  leader?: { id: string };
  nodes?: { id: string }[];
}

async function about(node: ClusterNode): Promise<About> {
  const response = await fetch(`${node.url}/api/v3/cluster`, { signal: AbortSignal.timeout(5000) });
  return (await response.json()) as About;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The warnings a node logged that say why etcd could not be reached. */
const unreachableLines = (stdout: string): string[] =>
  stdout.split('\n').filter((line) => line.includes('cluster: etcd cannot be reached'));

describe('a cluster node on an etcd that speaks TLS and asks for client certificates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-etcd-tls-'));
  const ca = certificateAuthority(dir, 'etcd-ca');
  const otherCa = certificateAuthority(dir, 'other-ca');
  const server = signedBy(ca, dir, 'etcd-server');
  const client = signedBy(ca, dir, 'streamcore-client');
  const stranger: Pem = signedBy(otherCa, dir, 'stranger-client');
  const nodes: ClusterNode[] = [];
  let etcd: TlsEtcd;

  const start = async (id: string, env: Record<string, string>): Promise<ClusterNode> => {
    const node = await startNode(dir, id, [etcd.endpoint], 8, env);
    nodes.push(node);
    return node;
  };
  const stop = async (node: ClusterNode): Promise<string> => {
    node.run.child.kill('SIGTERM');
    return (await node.run.exited).stdout;
  };

  before(async () => {
    etcd = await TlsEtcd.start(dir, server, ca.cert, client);
  });

  after(async () => {
    for (const node of nodes) if (node.run.child.exitCode === null) await stop(node);
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('joins with the CA and a client certificate', async () => {
    const node = await start('a', {
      CORE_CLUSTER_ETCD_CA_FILE: ca.cert,
      CORE_CLUSTER_ETCD_CERT_FILE: client.cert,
      CORE_CLUSTER_ETCD_KEY_FILE: client.key,
    });
    const joined = await until('node a registered and leading', async () => {
      const answer = await about(node);
      return answer.leader?.id === 'a' ? answer : undefined;
    });
    assert.equal(joined.status, 'online');
    assert.deepEqual(
      joined.nodes?.map((each) => each.id),
      ['a'],
    );
  });

  it('says, once, that etcd refused a node without a client certificate', async () => {
    const node = await start('b', { CORE_CLUSTER_ETCD_CA_FILE: ca.cert });
    const degraded = await until('node b degraded', async () => {
      const answer = await about(node);
      return answer.status === 'degraded' ? answer : undefined;
    });
    assert.match(degraded.degraded_error ?? '', /etcd refused this node's client certificate/);
    // A few more failed renewals and reads, still one line.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const lines = unreachableLines(await stop(node));
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0] ?? '', /client certificate \(cluster\.etcd\.cert_file, cluster\.etcd\.key_file/);
  });

  it("says that etcd's certificate is not signed by the CA it was given", async () => {
    const node = await start('c', {
      CORE_CLUSTER_ETCD_CA_FILE: otherCa.cert,
      CORE_CLUSTER_ETCD_CERT_FILE: stranger.cert,
      CORE_CLUSTER_ETCD_KEY_FILE: stranger.key,
    });
    const degraded = await until('node c degraded', async () => {
      const answer = await about(node);
      return answer.status === 'degraded' ? answer : undefined;
    });
    assert.match(
      degraded.degraded_error ?? '',
      /not signed by a CA this node trusts \(cluster\.etcd\.ca_file\)/,
    );
    const lines = unreachableLines(await stop(node));
    assert.equal(lines.length, 1, lines.join('\n'));
  });

  // Last: with authentication on, a node without a user is refused.
  it('joins with etcd authentication on, and says why not with a wrong password or a certificate with a CN', async () => {
    etcd.enableAuth(ca.cert, client, 'streamcore', 'etcd-secret');
    // etcd's JSON gateway refuses certificates with a CommonName while authentication is on.
    const anonymous = signedBy(ca, dir, 'anonymous-client', '/O=streamcore');
    const tls = {
      CORE_CLUSTER_ETCD_CA_FILE: ca.cert,
      CORE_CLUSTER_ETCD_CERT_FILE: anonymous.cert,
      CORE_CLUSTER_ETCD_KEY_FILE: anonymous.key,
    };
    const user = { CORE_CLUSTER_ETCD_USERNAME: 'streamcore', CORE_CLUSTER_ETCD_PASSWORD: 'etcd-secret' };
    const withCn = {
      CORE_CLUSTER_ETCD_CA_FILE: ca.cert,
      CORE_CLUSTER_ETCD_CERT_FILE: client.cert,
      CORE_CLUSTER_ETCD_KEY_FILE: client.key,
    };
    const wrongPassword = { ...user, CORE_CLUSTER_ETCD_PASSWORD: 'not-the-password' };
    const [node, wrong, named] = await Promise.all([
      start('d', { ...tls, ...user }),
      start('e', { ...tls, ...wrongPassword }),
      start('f', { ...withCn, ...user }),
    ]);
    await until('node d registered', async () => {
      const answer = await about(node);
      return answer.status === 'online' && answer.nodes?.some((each) => each.id === 'd') ? answer : undefined;
    });
    const degraded = await until('node e degraded', async () => {
      const answer = await about(wrong);
      return answer.status === 'degraded' ? answer : undefined;
    });
    assert.match(degraded.degraded_error ?? '', /etcd login failed: .*password/);
    const refused = await until('node f degraded', async () => {
      const answer = await about(named);
      return answer.status === 'degraded' ? answer : undefined;
    });
    assert.match(refused.degraded_error ?? '', /use one without CN \(the user is cluster\.etcd\.username\)/);
  });

  it('does not start with a client certificate but no key, naming the keys', async () => {
    const run = startMain(
      {
        CORE_API_AUTH_ENABLE: 'false',
        CORE_DB_DIR: join(dir, 'half', 'db'),
        CORE_STORAGE_DISK_DIR: join(dir, 'half', 'data'),
        CORE_ADDRESS: '127.0.0.1:0',
        CORE_CLUSTER_ENABLE: 'true',
        CORE_CLUSTER_ETCD_ENDPOINTS: etcd.endpoint,
        CORE_CLUSTER_ETCD_CERT_FILE: client.cert,
      },
      dir,
    );
    const listened = await Promise.race([run.exited.then(() => false), run.listening.then(() => true)]);
    if (listened) run.child.kill('SIGTERM');
    const exit = await run.exited;
    assert.equal(listened, false, 'the server started');
    assert.notEqual(exit.code, 0);
    assert.match(
      exit.stdout + exit.stderr,
      /cluster\.etcd\.cert_file, cluster\.etcd\.key_file: set both or neither/,
    );
  });
});
