import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** A self-signed certificate and key (openssl), PEM files in `dir`. */
export function selfSigned(dir: string, name: string, subjectAltName: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '30',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${subjectAltName}`,
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

export interface Pebble {
  /** `https://127.0.0.1:<port>/dir` */
  directoryUrl: string;
  /** The certificate pebble's own API serves (the ACME client's `tls.acme.ca_file`). */
  apiCaFile: string;
  /** PEM of the root pebble issues under (from its management API). */
  root(): Promise<string>;
  /** Makes challtestsrv answer `host` with `address` (default: every name is 127.0.0.1). */
  resolve(host: string, address: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Debian's pebble with pebble-challtestsrv as its DNS: every name resolves to 127.0.0.1, and
 * pebble validates HTTP-01 on `httpPort` (the server under test's plain port).
 */
export async function startPebble(
  httpPort: number,
  options: { eabRequired?: boolean } = {},
): Promise<Pebble> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-pebble-'));
  const api = selfSigned(dir, 'pebble-api', 'IP:127.0.0.1,DNS:localhost');
  const [acmePort, managementPort, dnsPort, challManagementPort, tlsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const config = join(dir, 'pebble.json');
  await writeFile(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: api.cert,
        privateKey: api.key,
        httpPort,
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: options.eabRequired ?? false,
      },
    }),
  );
  const children: ChildProcess[] = [];
  const challtestsrv = spawn(
    '/usr/bin/pebble-challtestsrv',
    [
      '-defaultIPv4',
      '127.0.0.1',
      '-defaultIPv6',
      '',
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-management',
      `127.0.0.1:${challManagementPort}`,
    ],
    { stdio: 'ignore' },
  );
  children.push(challtestsrv);
  const pebble = spawn('/usr/bin/pebble', ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], {
    stdio: 'ignore',
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_AUTHZREUSE: '0' },
  });
  children.push(pebble);
  const ca = await readFile(api.cert);
  const get = (url: string, method = 'GET', body?: string): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method, ca }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await get(`https://127.0.0.1:${acmePort}/dir`).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('pebble did not start within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    directoryUrl: `https://127.0.0.1:${acmePort}/dir`,
    apiCaFile: api.cert,
    root: async () => (await get(`https://127.0.0.1:${managementPort}/roots/0`)).text,
    async resolve(host, address) {
      const answer = await fetch(`http://127.0.0.1:${challManagementPort}/add-a`, {
        method: 'POST',
        body: JSON.stringify({ host, addresses: [address] }),
      });
      if (!answer.ok) throw new Error(`challtestsrv add-a: ${answer.status}`);
    },
    async stop() {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
