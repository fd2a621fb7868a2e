import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { freePort } from './free-port.js';

/**
 * A real S3-compatible server on loopback for the S3 filesystem tests: moto's server mode
 * (`moto_server`, Python, installed on the project's machines; Debian packages no S3 server), which
 * decodes `aws-chunked` uploads and keeps objects in memory and temporary files. In front of it a
 * TCP relay the tests can switch: `up` relays, `down` refuses connections (and cuts the open ones),
 * `silent` accepts and never answers (a hung endpoint). It counts the bytes moto sent back, so a
 * test can tell how much the server asked the endpoint for.
 */
export interface S3Endpoint {
  /** `127.0.0.1:<port>` of the relay: what `storage.s3[].endpoint` names. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** A client straight to moto (not through the relay), to look at the bucket as it is. */
  readonly direct: S3Client;
  /** Bytes moto answered through the relay since the start. */
  upstreamBytes(): number;
  /** Requests moto answered since the start (its request log), through the relay or not. */
  requests(): number;
  setMode(mode: 'up' | 'down' | 'silent'): void;
  stop(): Promise<void>;
}

/**
 * `moto_server` on PATH, or else where pyenv installs it (the machines' Python is pyenv's, and a
 * shell that did not source pyenv's set-up has only Debian's Python on PATH).
 */
function motoServer(): string {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, 'moto_server'))
    .find((file) => existsSync(file));
  if (onPath !== undefined) return onPath;
  const versions = join(process.env.PYENV_ROOT ?? join(homedir(), '.pyenv'), 'versions');
  const installed = existsSync(versions)
    ? readdirSync(versions)
        .map((version) => join(versions, version, 'bin', 'moto_server'))
        .find((file) => existsSync(file))
    : undefined;
  return installed ?? 'moto_server';
}

export async function startS3Endpoint(): Promise<S3Endpoint> {
  const motoPort = await freePort();
  const moto = spawn(motoServer(), ['-H', '127.0.0.1', '-p', String(motoPort)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<never>((_resolve, reject) => {
    moto.once('error', (error) =>
      reject(
        new Error(
          `moto_server could not be started (is the moto Python package installed?): ${error.message}`,
        ),
      ),
    );
    moto.once('exit', (code) => reject(new Error(`moto_server exited with ${code}`)));
  });
  exited.catch(() => undefined);
  // Read, or moto blocks once the pipe is full; each answered request is one log line.
  let requests = 0;
  moto.stderr?.setEncoding('utf8').on('data', (text: string) => {
    requests += text.match(/"(?:GET|PUT|HEAD|POST|DELETE) /g)?.length ?? 0;
  });
  await Promise.race([waitForHttp(`http://127.0.0.1:${motoPort}/`, 20_000), exited]);

  let mode: 'up' | 'down' | 'silent' = 'up';
  let bytes = 0;
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (mode === 'down') {
      client.destroy();
      return;
    }
    if (mode === 'silent') return;
    const upstream = connectTo(motoPort);
    sockets.add(upstream);
    upstream.once('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.once('close', () => upstream.destroy());
    upstream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const relayPort = (relay.address() as { port: number }).port;
  const credentials = { accessKeyId: 'streamcore-test', secretAccessKey: 'moto-secret-for-tests' };
  const direct = new S3Client({
    endpoint: `http://127.0.0.1:${motoPort}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint: `127.0.0.1:${relayPort}`,
    ...credentials,
    direct,
    upstreamBytes: () => bytes,
    requests: () => requests,
    setMode(next) {
      mode = next;
      if (next !== 'up') for (const socket of sockets) socket.destroy();
    },
    stop: () => stopAll(relay, sockets, moto, direct),
  };
}

function connectTo(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  return socket;
}

async function stopAll(
  relay: Server,
  sockets: Set<Socket>,
  moto: ChildProcess,
  direct: S3Client,
): Promise<void> {
  direct.destroy();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => relay.close(() => resolve()));
  if (moto.exitCode === null) {
    const gone = new Promise((resolve) => moto.once('exit', resolve));
    moto.kill('SIGTERM');
    await gone;
  }
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const answer = await fetch(url);
      await answer.arrayBuffer();
      return;
    } catch (error) {
      if (Date.now() > until)
        throw new Error(`${url} did not answer within ${timeoutMs} ms: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
