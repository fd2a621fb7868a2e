import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, getState, ok, waitFor } from './support.js';

/**
 * Issue 24 item 3 over real HTTP with the real ffmpeg: the own-port rule holds for the host ffmpeg
 * really connects to. Every spelling is first shown to reach a listener with the real ffmpeg (so
 * refusing it is needed), then refused by the server; an encoder sent here by an outside server's
 * redirect gets a 403 instead of the Prometheus text or the API.
 */

/** `{port}` and `{host}` are filled in; `{host}` is 127.0.0.1 or [::1] as the case needs. */
const SPELLINGS = [
  'http://evil.example\\@{host}:{port}/metrics',
  'https://evil.example\\@{host}:{port}/metrics',
  'rtmp://a\\@{host}:{port}/live/x',
  'rtmps://a\\@{host}:{port}/live/x',
  'rtsp://a\\@{host}:{port}/x',
  'tcp://evil.example\\@{host}:{port}',
  'tls://evil.example\\@{host}:{port}',
  'http://a@b@{host}:{port}/metrics',
  'http:{host}:{port}/metrics',
  'http://{host}:{port32}/metrics',
];
const HOSTS = ['127.0.0.1', '[::1]'];

function spell(template: string, host: string, port: number): string {
  return template
    .replaceAll('{host}', host)
    .replaceAll('{port32}', String(2 ** 32 + port))
    .replaceAll('{port}', String(port));
}

async function listening<T extends TcpServer | HttpServer>(server: T, host: string): Promise<T> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return server;
}

function portOf(server: TcpServer | HttpServer): number {
  return (server.address() as AddressInfo).port;
}

/** Runs the real ffmpeg on `url` until `connected` resolves or 15 s pass; true when it connected. */
async function ffmpegConnects(url: string, connected: Promise<void>): Promise<boolean> {
  const child = spawn(
    'ffmpeg',
    ['-hide_banner', '-nostdin', '-loglevel', 'quiet', '-i', url, '-f', 'null', '-'],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<false>((resolve) => child.once('exit', () => resolve(false)));
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref());
  const result = await Promise.race([connected.then(() => true), exited, timeout]);
  child.kill('SIGKILL');
  return result;
}

describe('the spellings of issue 24 item 3 with the real ffmpeg', () => {
  it('each spelling reaches the host after the last @ with the real ffmpeg', async () => {
    const ipv6 = await listening(createTcpServer(), '::1').then(
      (probe) => new Promise<boolean>((resolve) => probe.close(() => resolve(true))),
      () => false,
    );
    for (const host of HOSTS) {
      if (host === '[::1]' && !ipv6) continue;
      for (const template of SPELLINGS) {
        let seen!: () => void;
        const connected = new Promise<void>((resolve) => (seen = resolve));
        const probe = await listening(
          createTcpServer((socket) => {
            seen();
            socket.destroy();
          }),
          host.replace(/[[\]]/g, ''),
        );
        const url = spell(template, host, portOf(probe));
        const reached = await ffmpegConnects(url, connected);
        await new Promise((resolve) => probe.close(resolve));
        assert.ok(reached, `ffmpeg did not connect for ${url}`);
      }
    }
  });
});

for (const sandbox of ['on', 'off'] as const) {
  describe(`the own-port rule for the host ffmpeg connects to, ffmpeg.sandbox ${sandbox} (issue 24 item 3)`, () => {
    let server: TestServer;
    let port: number;

    before(async () => {
      server = await startServer({
        config: {
          ffmpeg: { sandbox },
          metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 10 },
        },
      });
      port = Number(new URL(server.url).port);
    });
    after(async () => {
      await server.close();
    });

    it('refuses each spelling of the own port as an input and as an output, naming it', async () => {
      for (const host of HOSTS) {
        for (const template of SPELLINGS) {
          const url = spell(template, host, port);
          for (const direction of ['input', 'output'] as const) {
            const id = `spelling-${direction}`;
            const io = { id: 'x', address: url, options: ['-f', 'data'] };
            const answer = await call<{ code: number; details: string[] }>(server, 'POST', '/process', {
              id,
              input:
                direction === 'input' ? [io] : [{ id: 'in', address: 'testsrc', options: ['-f', 'lavfi'] }],
              output: direction === 'output' ? [io] : [{ id: 'out', address: '-', options: ['-f', 'null'] }],
              options: [],
              autostart: false,
            });
            assert.equal(answer.status, 400, `${direction} ${url}: ${answer.text}`);
            assert.match(answer.body.details.join('\n'), new RegExp(`own port ${port}`), url);
          }
        }
      }
      assert.deepEqual(await ok<unknown[]>(server, 'GET', '/process'), []);
    });

    describe('an encoder redirected here by an outside server', () => {
      let outside: HttpServer;
      const asked: string[] = [];

      before(async () => {
        // Any server the policy lets encoders reach can answer with a redirect to this one.
        outside = await listening(
          createHttpServer((request, response) => {
            asked.push(request.url ?? '');
            const target = new URL(request.url ?? '/', 'http://outside').searchParams.get('to') ?? '/';
            response.writeHead(302, { location: `http://127.0.0.1:${port}${target}` }).end();
          }),
          '127.0.0.1',
        );
      });
      after(async () => {
        outside.closeAllConnections();
        await new Promise((resolve) => outside.close(resolve));
      });

      for (const [target, secret] of [
        ['/metrics', /# TYPE /],
        ['/api/v3/process', /"id"/],
        ['/api/v3/config', /"config"/],
      ] as const) {
        it(`gets a 403 for ${target}, and nothing of it lands in a file`, async () => {
          const id = `redirect${target.replaceAll('/', '-')}`;
          const leak = join(server.dir, 'data', `${id}.txt`);
          await ok(
            server,
            'POST',
            '/process',
            {
              id,
              reference: id,
              input: [
                {
                  id: 'in',
                  address: `http://127.0.0.1:${portOf(outside)}/go?to=${encodeURIComponent(target)}`,
                  options: ['-f', 'data'],
                },
              ],
              output: [
                {
                  id: 'out',
                  address: `{diskfs}/${id}.txt`,
                  options: ['-map', '0', '-c', 'copy', '-f', 'data'],
                },
              ],
              options: ['-loglevel', 'info'],
              reconnect: false,
              autostart: true,
            },
            200,
          );
          await waitFor(
            async () => {
              const state = await getState(server, id);
              return (
                asked.some((url) => url.includes(encodeURIComponent(target))) &&
                ['finished', 'failed'].includes(state.exec)
              );
            },
            20_000,
            `${id} to follow the redirect and end`,
          );
          const written = await readFile(leak, 'utf8').catch(() => '');
          assert.doesNotMatch(written, secret, `${target} leaked into ${leak}`);
          const report = await ok<{ log: [string, string][] }>(server, 'GET', `/process/${id}/report`);
          assert.match(report.log.map(([, line]) => line).join('\n'), /403/);
          await ok(server, 'DELETE', `/process/${id}`);
          await rm(leak, { force: true });
        });
      }

      it('still answers /metrics to a scraper on the same machine while encoders run', async () => {
        await ok(server, 'POST', '/process', {
          id: 'busy',
          input: [{ id: 'in', address: 'testsrc=size=32x24:rate=5', options: ['-re', '-f', 'lavfi'] }],
          output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
          options: [],
          autostart: true,
        });
        await waitFor(async () => (await getState(server, 'busy')).exec === 'running', 15_000, 'busy to run');
        const response = await fetch(`${server.url}/metrics`);
        assert.equal(response.status, 200);
        assert.match(await response.text(), /# TYPE /);
        await ok(server, 'DELETE', '/process/busy');
      });
    });
  });
}
