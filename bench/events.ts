/**
 * What the event bus costs at 1 000 events/s delivered to 100 stream subscribers and 10 webhooks,
 * and whether one subscriber that stops reading changes anything for the others.
 *
 * The server runs in a child process (this file with `--server`), which publishes the events
 * itself (`app.events.publish`, 10 every 10 ms: a process state event, about 150 bytes) so its
 * CPU figure is the bus, the streams and the webhooks. The subscribers (JSON streams) run in two
 * more child processes, the webhook receivers in this one; each takes the delay of every event it
 * gets as its arrival time minus the event's `ts` (one machine, one clock).
 *
 * Phases, each WARMUP_SEC then MEASURE_SEC, on the same server:
 *   - the 10 webhooks alone (the baseline: they are configured from the start);
 *   - with the 100 stream subscribers;
 *   - the same plus one subscriber that sends its request and never reads.
 * Reported per phase: the server's CPU (% of one core, from its own process.cpuUsage), its RSS at
 * the end, the p50/p99 delivery delay of streams and webhooks, events received per second.
 *
 * Run: node --import tsx bench/events.ts
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';

const SUBSCRIBERS = 100;
const WEBHOOKS = 10;
const EVENTS_PER_SECOND = 1000;
const WARMUP_SEC = 3;
const MEASURE_SEC = 10;
const WORKERS = 2;

interface Delays {
  delays: number[];
  received: number;
}

if (process.argv.includes('--server')) await runServer();
else if (process.argv.includes('--subscribers')) runSubscribers();
else await main();

/** The child: the real server, publishing its own events on command, reporting its CPU and RSS. */
async function runServer(): Promise<void> {
  const { pino } = await import('pino');
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/config/index.js');
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-events-'));
  const hooks = JSON.parse(process.env.BENCH_HOOKS ?? '[]') as string[];
  const file = join(dir, 'config.json');
  await writeFile(
    file,
    JSON.stringify({
      address: '127.0.0.1:0',
      db: { dir: join(dir, 'db') },
      storage: { disk: { dir: join(dir, 'data') } },
      events: {
        allow_loopback_webhooks: true,
        webhooks: hooks.map((url) => ({ url, events: ['process'], secret: 'bench-secret-0123456789' })),
      },
    }),
  );
  const { config } = await loadConfig({ CORE_CONFIGFILE: file }, dir);
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  const url = await app.listen();
  let publisher: NodeJS.Timeout | undefined;
  let cpuStart = process.cpuUsage();
  let wallStart = Date.now();
  process.on('message', (message: { do: string }) => {
    if (message.do === 'publish') {
      // Paced by the clock, not by the timer's count: a late timer on a busy machine catches up.
      const start = Date.now();
      let published = 0;
      publisher = setInterval(() => {
        const due = Math.floor(((Date.now() - start) * EVENTS_PER_SECOND) / 1000);
        for (; published < due; published++) {
          app.events.publish('process', 'state', {
            id: 'bench',
            reference: 'bench',
            state: 'running',
            from: 'starting',
          });
        }
      }, 10);
    } else if (message.do === 'measure') {
      cpuStart = process.cpuUsage();
      wallStart = Date.now();
    } else if (message.do === 'report') {
      const cpu = process.cpuUsage(cpuStart);
      const percent = ((cpu.user + cpu.system) / 1000 / (Date.now() - wallStart)) * 100;
      process.send?.({ cpu: percent, rss: process.memoryUsage().rss });
    } else if (message.do === 'stop') {
      clearInterval(publisher);
      void app
        .close()
        .then(() => rm(dir, { recursive: true, force: true }))
        .then(() => process.exit(0));
    }
  });
  process.send?.({ url });
}

/** A child: `count` JSON-stream subscribers; on `collect`, the delays since the last collect. */
function runSubscribers(): void {
  const url = process.env.BENCH_URL ?? '';
  const count = Number(process.env.BENCH_COUNT);
  let collected: Delays = { delays: [], received: 0 };
  for (let index = 0; index < count; index++) {
    const req = request(`${url}/api/v3/events`, {
      method: 'POST',
      headers: { accept: 'application/x-json-stream' },
    });
    req.on('response', (response) => {
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const now = Date.now();
        pending += chunk;
        let at: number;
        while ((at = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, at);
          pending = pending.slice(at + 1);
          const ts = tsOf(line);
          if (ts === undefined) continue;
          collected.received++;
          collected.delays.push(now - ts);
        }
      });
    });
    req.end();
  }
  process.on('message', (message: string) => {
    if (message === 'stop') process.exit(0);
    if (message !== 'collect') return;
    process.send?.(collected);
    collected = { delays: [], received: 0 };
  });
}

/** `ts` of an event line without parsing all of it (keep-alives have none). */
function tsOf(line: string): number | undefined {
  const at = line.indexOf('"ts":');
  if (at < 0) return undefined;
  return Number.parseInt(line.slice(at + 5, at + 20), 10);
}

async function main(): Promise<void> {
  const hookDelays: Delays = { delays: [], received: 0 };
  const receivers: Server[] = [];
  for (let index = 0; index < WEBHOOKS; index++) {
    const receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const now = Date.now();
        for (const match of body.matchAll(/"ts":(\d+)/g)) {
          hookDelays.received++;
          hookDelays.delays.push(now - Number(match[1]));
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receivers.push(receiver);
  }
  const hooks = receivers.map((receiver) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
  const child = fork(import.meta.filename, ['--server'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_HOOKS: JSON.stringify(hooks) },
  });
  const next = <T>(): Promise<T> =>
    new Promise((resolve) => child.once('message', (message) => resolve(message as T)));
  const { url } = await next<{ url: string }>();
  console.error(`server at ${url}`);
  child.send({ do: 'publish' });

  const rows: string[][] = [];
  const phase = async (name: string, workers: ChildProcess[]): Promise<void> => {
    console.error(`phase: ${name}`);
    await sleep(WARMUP_SEC * 1000);
    const collect = (): Promise<Delays[]> =>
      Promise.all(
        workers.map(
          (worker) =>
            new Promise<Delays>((resolve) => {
              worker.once('message', (message) => resolve(message as Delays));
              worker.send('collect');
            }),
        ),
      );
    await collect();
    hookDelays.delays = [];
    hookDelays.received = 0;
    child.send({ do: 'measure' });
    await sleep(MEASURE_SEC * 1000);
    const server = (child.send({ do: 'report' }), await next<{ cpu: number; rss: number }>());
    const streams = (await collect()).reduce(
      (all, one) => ({ delays: all.delays.concat(one.delays), received: all.received + one.received }),
      { delays: [], received: 0 } as Delays,
    );
    rows.push([
      name,
      server.cpu.toFixed(1),
      (server.rss / 1024 / 1024).toFixed(0),
      percentile(streams.delays, 0.5),
      percentile(streams.delays, 0.99),
      (streams.received / MEASURE_SEC).toFixed(0),
      percentile(hookDelays.delays, 0.5),
      percentile(hookDelays.delays, 0.99),
      (hookDelays.received / MEASURE_SEC).toFixed(0),
    ]);
  };

  await phase(`${WEBHOOKS} webhooks, no streams`, []);
  // Two processes of subscribers: their parsing must not share a thread with the measurement.
  const workers = Array.from({ length: WORKERS }, () =>
    fork(import.meta.filename, ['--subscribers'], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BENCH_URL: url, BENCH_COUNT: String(SUBSCRIBERS / WORKERS) },
    }),
  );
  await phase(`${WEBHOOKS} webhooks, ${SUBSCRIBERS} streams`, workers);
  const stalled = await stallOne(url);
  await phase(`${WEBHOOKS} webhooks, ${SUBSCRIBERS} streams, 1 stalled`, workers);
  stalled.destroy();

  child.send({ do: 'stop' });
  for (const worker of workers) worker.send('stop');
  for (const receiver of receivers) receiver.close();
  const header = [
    'phase',
    'server CPU %',
    'RSS MiB',
    'stream p50 ms',
    'stream p99 ms',
    'stream events/s',
    'hook p50 ms',
    'hook p99 ms',
    'hook events/s',
  ];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map(() => '---').join(' | ')} |`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

/** A subscriber that sends its request, takes the first bytes of the answer, and reads no more. */
async function stallOne(url: string): Promise<Socket> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write('POST /api/v3/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n');
  await new Promise((resolve) => socket.once('data', resolve));
  socket.pause();
  return socket;
}

function percentile(values: number[], fraction: number): string {
  if (values.length === 0) return '-';
  const sorted = Float64Array.from(values).sort();
  return String(sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
