import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { createServerLogger, LogBuffer } from '../../src/log/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok, waitFor } from '../process/support.js';
import type { StreamEvent } from './event-reader.js';

const SECRET = 'whsec-0123456789abcdef';
const BLACK_HOLE_SECRET = 'whsec-fedcba9876543210';
const QUEUE = 10;

interface State {
  url: string;
  events: string[];
  delivered: number;
  queued: number;
  dropped: number;
  last_success: number | null;
  last_error: { ts: number; message: string } | null;
}

/** A webhook receiver on loopback that checks the signature of every delivery (docs/events.md). */
class Receiver {
  readonly events: StreamEvent[] = [];
  badSignatures = 0;
  repeats = 0;
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      void readBody(request).then((body) => {
        if (!verify(String(request.headers['x-streamcore-signature']), body)) this.badSignatures++;
        // At least once: a delivery whose answer came too late is sent again; `seq` tells a repeat.
        for (const event of (JSON.parse(body) as { events: StreamEvent[] }).events) {
          if (this.events.some((seen) => seen.seq === event.seq)) this.repeats++;
          else this.events.push(event);
        }
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
  }
}

/** The receiver's side of the signature: five lines in docs/events.md say the same. */
function verify(header: string, rawBody: string): boolean {
  const secret = SECRET;
  const { t, v1 = '' } = Object.fromEntries(
    header.split(',').map((part) => part.split('=') as [string, string]),
  );
  const mac = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');
  const same = v1.length === mac.length && timingSafeEqual(Buffer.from(v1), Buffer.from(mac));
  const fresh = Math.abs(Date.now() / 1000 - Number(t)) < 300; // refuses replays
  return same && fresh;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
  });
}

describe('webhooks: signed, in order after an outage, counted drops for a receiver that never answers', () => {
  const receiver = new Receiver();
  /** Takes connections and never answers. */
  const blackHole = createServer(() => undefined);
  const buffer = new LogBuffer(1000);
  let server: TestServer;

  before(async () => {
    await receiver.start();
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    const blackHolePort = (blackHole.address() as AddressInfo).port;
    server = await startServer({
      logger: createServerLogger('info', buffer, pino.destination('/dev/null')),
      logBuffer: buffer,
      // Ten times faster: attempts give up after 1 s, back-off starts at 100 ms.
      eventTimers: {
        setTimeout: (callback, ms) => setTimeout(callback, ms / 10),
        clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
      },
      config: {
        storage: { memory: { auth: { enable: false } } },
        events: {
          allow_loopback_webhooks: true,
          webhook_queue_events: QUEUE,
          webhooks: [
            { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['filesystem'], secret: SECRET },
            {
              url: `http://user:pw@127.0.0.1:${blackHolePort}/`,
              events: ['filesystem'],
              secret: BLACK_HOLE_SECRET,
            },
          ],
        },
      },
    });
  });
  after(async () => {
    await server.close();
    await receiver.stop();
    blackHole.closeAllConnections();
    blackHole.close();
  });

  const put = async (name: string): Promise<void> => {
    const response = await fetch(`${server.url}/memfs/${name}`, { method: 'PUT', body: 'x' });
    assert.equal(response.status, 201);
  };
  const states = (): Promise<State[]> => ok<State[]>(server, 'GET', '/events/webhooks');
  const paths = (events: StreamEvent[]): string[] => events.map((event) => String(event.path));

  it('delivers signed events, keeps the backlog while the receiver is down, and sends it in order', async () => {
    await put('one.txt');
    await waitFor(() => Promise.resolve(receiver.events.length === 1), 5000, 'the first delivery');
    await receiver.stop();
    const backlog = ['two.txt', 'three.txt', 'four.txt', 'five.txt', 'six.txt'];
    for (const name of backlog) await put(name);
    const down = await waitFor(
      async () => {
        const [hook] = await states();
        return hook !== undefined && hook.last_error !== null && hook.queued === backlog.length
          ? hook
          : undefined;
      },
      10_000,
      'the failures while the receiver is down',
    );
    assert.equal(down.dropped, 0);
    await receiver.start();
    await waitFor(
      () => Promise.resolve(receiver.events.length === 1 + backlog.length),
      10_000,
      'the backlog',
    );
    assert.deepEqual(paths(receiver.events), ['/one.txt', ...backlog.map((name) => `/${name}`)]);
    assert.equal(receiver.badSignatures, 0, 'every signature verifies');
    const seqs = receiver.events.map((event) => event.seq ?? 0);
    assert.deepEqual(
      [...seqs].sort((a, b) => a - b),
      seqs,
      'in order',
    );
    const [hook] = await states();
    assert.equal(hook?.queued, 0);
    assert.equal(hook?.delivered, 1 + backlog.length);
    assert.ok(
      (hook?.last_success ?? 0) >= (hook?.last_error?.ts ?? Infinity),
      'the success came after the error',
    );
  });

  it('counts the drops of a receiver that never answers, holding no more than its queue', async () => {
    for (let index = 0; index < 3 * QUEUE; index++) await put(`flood-${index}.txt`);
    const total = 6 + 3 * QUEUE;
    const hole = await waitFor(
      async () => {
        const hook = (await states())[1];
        const settled =
          hook !== undefined && hook.dropped + hook.queued === total && hook.dropped > 2 * QUEUE;
        return settled && hook.last_error !== null ? hook : undefined;
      },
      10_000,
      'the black hole to drop what its queue cannot hold',
    );
    assert.ok(hole.queued <= QUEUE, `queued ${hole.queued}`);
    assert.equal(hole.delivered, 0);
    assert.equal(hole.last_success, null);
    assert.match(hole.last_error?.message ?? '', /no answer in time/);
    assert.equal(hole.url.includes('pw'), false, 'user info is masked');
  });

  it('never shows a webhook secret: not in the config API, not in the log', async () => {
    const config = await fetch(`${server.url}/api/v3/config`).then((response) => response.text());
    const log = await fetch(`${server.url}/api/v3/log?format=raw`).then((response) => response.text());
    for (const text of [config, log, buffer.lines().join('\n')]) {
      assert.equal(text.includes(SECRET), false);
      assert.equal(text.includes(BLACK_HOLE_SECRET), false);
    }
    assert.match(buffer.lines().join('\n'), /webhook delivery failed/);
  });
});
