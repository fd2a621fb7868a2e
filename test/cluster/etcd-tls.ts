import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { selfSigned } from '../helpers/pebble.js';
import { freePort } from '../helpers/free-port.js';

export interface Pem {
  cert: string;
  key: string;
}

/** A certificate for `name` signed by `ca` (openssl), usable by a server and a client. */
export function signedBy(ca: Pem, dir: string, name: string, subject = `/CN=${name}`): Pem {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const extensions = join(dir, `${name}.ext`);
  // etcd's JSON gateway dials etcd's own gRPC port with the server certificate as its client
  // certificate, so under --client-cert-auth the server's certificate needs clientAuth too.
  writeFileSync(extensions, 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  const quiet = { stdio: 'ignore' } as const;
  execFileSync(
    'openssl',
    ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-subj',
      subject,
      '-keyout',
      key,
      '-out',
      csr,
    ]),
    quiet,
  );
  execFileSync(
    'openssl',
    ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial'].concat([
      '-days',
      '30',
      '-extfile',
      extensions,
      '-out',
      cert,
    ]),
    quiet,
  );
  return { cert, key };
}

/** A CA (self-signed) in `dir`. */
export function certificateAuthority(dir: string, name: string): Pem {
  return selfSigned(dir, name, `DNS:${name}`);
}

/**
 * One etcd member (Debian's /usr/bin/etcd) serving clients on https loopback with `server`'s
 * certificate, and asking each client for a certificate signed by `clientCa`
 * (`--client-cert-auth`).
 */
export class TlsEtcd {
  private constructor(
    readonly endpoint: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(dir: string, server: Pem, clientCa: string, client: Pem): Promise<TlsEtcd> {
    const endpoint = `https://127.0.0.1:${await freePort()}`;
    const peer = `http://127.0.0.1:${await freePort()}`;
    const child = spawn(
      '/usr/bin/etcd',
      ['--name', 'tls0', '--data-dir', join(dir, 'etcd-tls')].concat(
        ['--listen-client-urls', endpoint, '--advertise-client-urls', endpoint],
        ['--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer],
        ['--initial-cluster', `tls0=${peer}`, '--initial-cluster-state', 'new'],
        ['--cert-file', server.cert, '--key-file', server.key],
        ['--trusted-ca-file', clientCa, '--client-cert-auth'],
      ),
      { stdio: 'ignore' },
    );
    const etcd = new TlsEtcd(endpoint, child);
    const deadline = Date.now() + 30_000;
    while (!(await etcd.healthy(clientCa, client))) {
      if (Date.now() > deadline || child.exitCode !== null) {
        await etcd.stop();
        throw new Error('etcd with TLS did not become healthy');
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return etcd;
  }

  /** etcd's `/health` answers `"health":"true"` to a client with a certificate. */
  private healthy(ca: string, client: Pem): Promise<boolean> {
    return new Promise((resolve) => {
      const ask = request(`${this.endpoint}/health`, {
        ca: readFileSync(ca),
        cert: readFileSync(client.cert),
        key: readFileSync(client.key),
        signal: AbortSignal.timeout(1000),
      });
      ask.once('error', () => resolve(false));
      ask.once('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.once('end', () => resolve(/"health":\s*"true"/.test(body)));
      });
      ask.end();
    });
  }

  /**
   * Turns etcd's authentication on with a root user and `user`, who may read and write
   * `/streamcore/` (what a node needs), through etcdctl with `client`'s certificate.
   */
  enableAuth(ca: string, client: Pem, user: string, password: string): void {
    const etcdctl = (...args: string[]) =>
      execFileSync(
        '/usr/bin/etcdctl',
        ['--endpoints', this.endpoint, '--cacert', ca, '--cert', client.cert, '--key', client.key, ...args],
        { env: { ETCDCTL_API: '3', PATH: process.env.PATH ?? '' }, stdio: 'pipe' },
      );
    etcdctl('user', 'add', 'root', '--new-user-password', 'root-secret');
    etcdctl('role', 'add', 'streamcore');
    etcdctl('role', 'grant-permission', 'streamcore', '--prefix=true', 'readwrite', '/streamcore/');
    etcdctl('user', 'add', user, '--new-user-password', password);
    etcdctl('user', 'grant-role', user, 'streamcore');
    etcdctl('auth', 'enable');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}
