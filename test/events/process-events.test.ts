import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, getState, lavfiProcess, ok, waitForState } from '../process/support.js';
import { EventReader, type StreamEvent } from './event-reader.js';

/** The process events of `id`, as `event` or `event:state`. */
function lifeOf(events: StreamEvent[], id: string): string[] {
  return events
    .filter((event) => event.type === 'process' && event.id === id)
    .map((event) => (event.event === 'state' ? `state:${String(event.state)}` : event.event));
}

function assertOrdered(events: StreamEvent[]): void {
  for (let index = 1; index < events.length; index++) {
    const [before, now] = [events[index - 1] as StreamEvent, events[index] as StreamEvent];
    assert.ok((now.seq ?? 0) > (before.seq ?? 0), `seq grows: ${before.seq} then ${now.seq}`);
    assert.ok(now.ts >= before.ts, 'ts never goes back');
  }
}

describe('event stream: processes, filters, replay', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { events: { replay_events: 20 }, storage: { memory: { auth: { enable: false } } } },
    });
  });
  after(() => server.close());

  it('an SSE and a JSON-stream client see a process live, get killed, fail with its reason, and go', async () => {
    const sse = await EventReader.open(server.url, { format: 'sse' });
    const json = await EventReader.open(server.url, { format: 'json' });
    const running = await EventReader.open(server.url, {
      format: 'json',
      body: { filters: [{ type: 'process', event: 'state', data: { state: '^running$' } }] },
    });
    // The reference's process route and filter: `pid` and `type` (what happened) as expressions.
    const broken = await EventReader.open(server.url, {
      format: 'json',
      path: '/events/process',
      body: { filters: [{ pid: '^brok', type: '^state$' }] },
    });
    assert.match(String(sse.headers['content-type']), /^text\/event-stream/);
    assert.match(String(json.headers['content-type']), /^application\/x-json-stream/);

    await ok(server, 'POST', '/process', lavfiProcess('life'));
    await ok(server, 'PUT', '/process/life/command', { command: 'start' });
    const { pid } = await waitForState(server, 'life', 'running');
    process.kill(pid, 'SIGKILL');
    await waitForState(server, 'life', 'killed');
    await ok(server, 'PUT', '/process/life/command', { command: 'stop' });
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('broken'),
      input: [{ id: 'in', address: 'nonexistent-input.ts', options: [] }],
      autostart: true,
    });
    await waitForState(server, 'broken', 'failed');
    await ok(server, 'DELETE', '/process/life');

    const life = ['created', 'state:starting', 'state:running', 'state:killed', 'deleted'];
    for (const reader of [sse, json]) {
      await reader.until(
        (events) => lifeOf(events, 'life').includes('deleted'),
        `${reader.format}: life deleted`,
      );
      await reader.until(
        (events) => lifeOf(events, 'broken').includes('state:failed'),
        `${reader.format}: broken failed`,
      );
      assert.deepEqual(lifeOf(reader.events, 'life'), life, reader.format);
      assert.deepEqual(lifeOf(reader.events, 'broken').slice(0, 3), [
        'created',
        'state:starting',
        'state:running',
      ]);
      const failed = reader.events.find((event) => event.id === 'broken' && event.state === 'failed');
      assert.ok(failed !== undefined);
      assert.match(String(failed.reason), /exited with code/);
      assert.match(String(failed.last_line), /nonexistent-input/);
      assertOrdered(reader.events);
    }
    assert.deepEqual(
      sse.events.map((event) => event.seq),
      json.events.map((event) => event.seq),
      'both formats carry the same events',
    );
    await running.until((events) => events.length >= 2, 'the two running states');
    assert.deepEqual(
      running.events.map((event) => `${String(event.id)}:${String(event.state)}`),
      ['life:running', 'broken:running'],
      'the filter lets only running states through',
    );
    await broken.until((events) => events.some((event) => event.state === 'failed'), 'broken failed');
    assert.deepEqual(
      broken.events.map((event) => `${String(event.id)}:${String(event.state)}`),
      ['broken:starting', 'broken:running', 'broken:failed'],
    );
    for (const reader of [sse, json, running, broken]) reader.close();
    const { exec } = await getState(server, 'broken');
    assert.equal(exec, 'failed');
  });

  it('refuses bad filters and a bad Last-Event-ID with the v16 envelope', async () => {
    for (const [body, detail] of [
      [{ filters: [{ message: '(' }] }, /filters\[0\]\.message: not a valid expression/],
      [{ filters: 'process' }, /filters: must be an array/],
      [{ last_seq: -1 }, /last_seq/],
    ] as const) {
      const answer = await call<{ code: number; details: string[] }>(server, 'POST', '/events', body);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.code, 400);
      assert.match(answer.body.details.join(' '), detail);
    }
    // core-client-go sends a Go struct: `null` where it has no list or map, "" where no text.
    for (const body of [
      { filters: null },
      { filters: [{ event: 'process', message: '', level: 'info', data: null }] },
    ]) {
      const reader = await EventReader.open(server.url, { format: 'json', body });
      assert.equal(reader.status, 200, JSON.stringify(body));
      reader.close();
    }
    const response = await fetch(`${server.url}/api/v3/events`, {
      method: 'POST',
      headers: { 'last-event-id': 'yesterday' },
    });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /Last-Event-ID/);
  });

  it('gives a client that comes back what it missed, or a gap marker where the buffer lost it', async () => {
    const put = (name: string) =>
      fetch(`${server.url}/memfs/${name}`, { method: 'PUT', body: 'x' }).then((response) => {
        assert.equal(response.status, 201);
      });
    const first = await EventReader.open(server.url, { format: 'json' });
    await put('a.txt');
    await first.until((events) => events.some((event) => event.path === '/a.txt'), 'the write of a.txt');
    const seen = first.events.at(-1)?.seq ?? 0;
    first.close();

    for (const name of ['b.txt', 'c.txt']) await put(name);
    const back = await EventReader.open(server.url, {
      format: 'sse',
      headers: { 'last-event-id': String(seen) },
    });
    await back.until((events) => events.length >= 2, 'the two missed writes');
    assert.deepEqual(
      back.events.map((event) => `${event.type}:${event.event}:${String(event.path)}`),
      ['filesystem:write:/b.txt', 'filesystem:write:/c.txt'],
    );
    back.close();

    for (let index = 0; index < 30; index++) await put(`many-${index}.txt`);
    const late = await EventReader.open(server.url, { format: 'json', body: { last_seq: seen } });
    await late.until((events) => events.length >= 21, 'the gap marker and the 20 kept events');
    const [gap, ...kept] = late.events;
    assert.equal(gap?.type, 'gap');
    assert.equal(gap?.reason, 'expired');
    assert.equal(gap?.from, seen + 1);
    assert.equal(gap?.to, (kept[0]?.seq ?? 0) - 1);
    assert.equal(kept.at(-1)?.path, '/many-29.txt');
    late.close();

    await put('bee.txt');
    const files = await EventReader.open(server.url, {
      format: 'json',
      path: '/events/media/mem?glob=/bee*',
    });
    await put('other.txt');
    await put('bee2.txt');
    await files.until((events) => events.length >= 2, 'the list and the write of bee2.txt');
    assert.deepEqual(
      files.events.map((event) => [event.action, event.name ?? event.names]),
      [
        ['list', ['/bee.txt']],
        ['create', '/bee2.txt'],
      ],
    );
    files.close();
    const unknown = await fetch(`${server.url}/api/v3/events/media/nfs`, { method: 'POST' });
    assert.equal(unknown.status, 404);

    const restarted = await EventReader.open(server.url, { format: 'json', body: { last_seq: 1e12 } });
    await restarted.until((events) => events.length >= 1, 'the restart gap marker');
    assert.equal(restarted.events[0]?.reason, 'restart');
    restarted.close();
  });
});
