import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { socketInodes } from '../../src/process/supervise/encoder-connections.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { getState, ok, waitFor } from '../process/support.js';

/**
 * The encoder guard on an API worker (docs/performance.md#the-api-on-every-core, issue 24 item 3):
 * an encoder sent to the server by an outside server's redirect must get the main process's 403,
 * not a worker's answer, even when the worker is the process that accepted its connection. With
 * authentication off a worker answers `GET /api/v3/metrics` to any client on this machine, so
 * without the guard the catalog would land in the encoder's output file.
 *
 * To be sure the worker accepts the encoder's connection, this process (the main one) holds its
 * event loop while the encoder connects: only the worker can accept then. It lets go once the
 * worker holds the connection (read from /proc), or after 15 s.
 */

const ENTRY = {
  modulePath: join(import.meta.dirname, '..', '..', 'src', 'main.ts'),
  execArgv: ['--import', import.meta.resolve('tsx')],
};

/**
 * A server outside streamcore (another process, so it answers while this one is held) that keeps
 * the encoder's request until it reads a line on stdin, then redirects it to `target`.
 */
function startOutside(target: string): Promise<{ child: ChildProcess; port: number; asked: Promise<void> }> {
  const script = `
    const http = require('node:http');
    const waiting = [];
    process.stdin.on('data', () => { for (const response of waiting.splice(0)) response.writeHead(302, { location: ${JSON.stringify(target)} }).end(); });
    http.createServer((request, response) => { waiting.push(response); process.stdout.write('asked\\n'); })
      .listen(0, '127.0.0.1', function () { process.stdout.write('port ' + this.address().port + '\\n'); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    let askedResolve!: () => void;
    const asked = new Promise<void>((resolveAsked) => (askedResolve = resolveAsked));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /port (\d+)/.exec(output)?.[1];
      if (port !== undefined && !output.includes('resolved')) {
        output += 'resolved';
        resolve({ child, port: Number(port), asked });
      }
      if (output.includes('asked')) askedResolve();
    });
    child.once('exit', () => reject(new Error('the outside server exited')));
  });
}

/** The pid of the worker when it holds a connection to `serverPort` from a port not in `known`. */
function workerHoldsNewConnection(
  workerPid: number,
  serverPort: number,
  known: ReadonlySet<number>,
): boolean {
  const tables = ['tcp', 'tcp6'].map((name) => readFileSync(`/proc/net/${name}`, 'utf8'));
  const inodes = new Set<string>();
  for (const table of tables) {
    for (const line of table.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(':')[1];
      const remote = fields[2]?.split(':')[1];
      if (local === undefined || remote === undefined || fields[3] !== '01') continue;
      const remotePort = parseInt(remote, 16);
      if (parseInt(local, 16) !== serverPort || known.has(remotePort)) continue;
      for (const inode of socketInodes(table, serverPort, remotePort)) inodes.add(inode);
    }
  }
  if (inodes.size === 0) return false;
  const dir = `/proc/${workerPid}/fd`;
  return readdirSync(dir).some((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(join(dir, fd)))?.[1] ?? '');
    } catch {
      return false;
    }
  });
}

describe('the encoder guard on an API worker', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({
      config: { api: { workers: 1, auth: { enable: false } } },
      apiWorkerEntry: ENTRY,
    });
    await server.app.apiWorkers?.ready;
    assert.equal(server.app.apiWorkers?.pids().length, 1);
  });
  after(async () => {
    await server.close();
  });

  it("answers an encoder's request a worker accepted with the main process's 403", async () => {
    const serverPort = Number(new URL(server.url).port);
    const workerPid = server.app.apiWorkers!.pids()[0]!;
    // A worker answers the catalog to a client on this machine while authentication is off.
    const catalog = await fetch(`${server.url}/api/v3/metrics`);
    assert.equal(catalog.status, 200);
    await catalog.arrayBuffer();

    const outside = await startOutside(`http://127.0.0.1:${serverPort}/api/v3/metrics`);
    try {
      const id = 'guarded';
      const leak = join(server.dir, 'data', `${id}.txt`);
      await ok(server, 'POST', '/process', {
        id,
        input: [{ id: 'in', address: `http://127.0.0.1:${outside.port}/go`, options: ['-f', 'data'] }],
        output: [
          { id: 'out', address: `{diskfs}/${id}.txt`, options: ['-map', '0', '-c', 'copy', '-f', 'data'] },
        ],
        options: ['-loglevel', 'info'],
        reconnect: false,
        autostart: true,
      });
      await outside.asked;
      // The worker learns the running encoders from a message of the main process: let it arrive.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The connections open now (this test's own keep-alive ones) are not the encoder's.
      const known = new Set<number>();
      for (const line of ['tcp', 'tcp6'].flatMap((name) =>
        readFileSync(`/proc/net/${name}`, 'utf8').split('\n'),
      )) {
        const fields = line.trim().split(/\s+/);
        if (fields[1]?.split(':')[1] === serverPort.toString(16).toUpperCase().padStart(4, '0'))
          known.add(parseInt(fields[2]?.split(':')[1] ?? '0', 16));
      }
      // Release the redirect, then hold this process until the worker has the encoder's connection.
      // A write to a pipe with nothing queued is made at once (libuv), before this process is held.
      outside.child.stdin!.write('go\n');
      const deadline = Date.now() + 15_000;
      let accepted = false;
      while (!accepted && Date.now() < deadline)
        accepted = workerHoldsNewConnection(workerPid, serverPort, known);
      assert.ok(accepted, "the worker did not accept the encoder's connection within 15 s");

      await waitFor(
        async () => ['finished', 'failed'].includes((await getState(server, id)).exec),
        20_000,
        `${id} to follow the redirect and end`,
      );
      const written = await readFile(leak, 'utf8').catch(() => '');
      assert.doesNotMatch(written, /"name"/, `the metrics catalog leaked into ${leak}`);
      const report = await ok<{ log: [string, string][] }>(server, 'GET', `/process/${id}/report`);
      assert.match(report.log.map(([, line]) => line).join('\n'), /403/);
    } finally {
      outside.child.kill('SIGKILL');
    }
  });
});
