import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { createServerLogger, LogBuffer } from '../../src/log/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ffmpeg, publish } from '../ingest/rtmp-support.js';
import { EventReader } from './event-reader.js';

describe('event stream: RTMP publish and play, log lines, a client that stops reading', () => {
  const buffer = new LogBuffer(100);
  let logger: Logger;
  let server: TestServer;
  before(async () => {
    logger = createServerLogger('info', buffer, pino.destination('/dev/null'));
    server = await startServer({
      logger,
      logBuffer: buffer,
      config: {
        rtmp: { enable: true, address: '127.0.0.1:0', app: '/live' },
        events: { max_buffered_kbytes: 64 },
        // Loopback clients count as sessions here (by default they are ignored).
        sessions: { ip_ignorelist: [] },
      },
    });
  });
  after(() => server.close());

  it('a real ffmpeg publish and play give publish, join, leave and unpublish with name and address', async () => {
    const port = server.app.ingest.rtmp?.ports()[0];
    assert.ok(port !== undefined);
    const media = await EventReader.open(server.url, {
      format: 'json',
      body: { filters: [{ type: 'media' }] },
    });
    const sessions = await EventReader.open(server.url, {
      format: 'sse',
      body: { filters: [{ type: 'session', data: { collector: '^rtmp$' } }] },
    });
    // The reference's media stream: objects with `action`, no `type`.
    const names = await EventReader.open(server.url, { format: 'json', path: '/events/media/rtmp' });
    const publisher = publish(`rtmp://127.0.0.1:${port}/live/cam1`, 4);
    await media.until((events) => events.some((event) => event.event === 'publish'), 'the publish');
    const player = ffmpeg(['-i', `rtmp://127.0.0.1:${port}/live/cam1`, '-t', '1', '-f', 'null', '-']);
    assert.equal((await player.done).code, 0);
    assert.equal((await publisher.done).code, 0);
    await media.until((events) => events.some((event) => event.event === 'unpublish'), 'the unpublish');
    assert.deepEqual(
      media.events.map((event) => event.event),
      ['publish', 'join', 'leave', 'unpublish'],
    );
    for (const event of media.events) {
      assert.equal(event.protocol, 'rtmp');
      assert.equal(event.name, 'cam1');
      assert.equal(event.path, '/live/cam1');
      assert.match(String(event.address), /127\.0\.0\.1/);
    }
    media.close();
    await names.until((events) => events.length >= 3, 'list, create, remove');
    assert.deepEqual(
      names.events.map((event) => [event.action, event.name ?? event.names]),
      [
        ['list', []],
        ['create', '/live/cam1'],
        ['remove', '/live/cam1'],
      ],
    );
    names.close();
    await sessions.until(
      (events) => events.filter((event) => event.event === 'end').length === 2,
      'two ends',
    );
    const ids = new Set(sessions.events.map((event) => event.id));
    assert.equal(ids.size, 2, 'the publisher and the player');
    for (const id of ids) {
      const life = sessions.events.filter((event) => event.id === id);
      assert.deepEqual(
        life.map((event) => event.event),
        ['start', 'end'],
      );
      assert.equal(life[0]?.reference, 'cam1');
      assert.ok(Number(life[1]?.rx_bytes) + Number(life[1]?.tx_bytes) > 0, 'the end carries the traffic');
    }
    sessions.close();
  });

  it('drops a client that stops reading, with a log line, and the others get every event', async () => {
    // The reference's log route: its filters name the component (`event`) and the level.
    const logLines = await EventReader.open(server.url, {
      format: 'json',
      path: '/events/log',
      body: { filters: [{ event: 'flood' }, { event: 'events', level: 'warn' }] },
    });
    // A client that sends its request and never reads a byte of the answer.
    const stalled = connect(Number(new URL(server.url).port), '127.0.0.1');
    stalled.write(
      'POST /api/v3/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nContent-Length: 0\r\n\r\n',
    );
    // Its answer has begun (the first keep-alive); from now on it reads nothing.
    await new Promise<Buffer>((resolve) => stalled.once('data', resolve));
    stalled.pause();
    const lines = 2000;
    const text = 'x'.repeat(8000);
    for (let index = 0; index < lines; index++) {
      logger.info({ component: 'flood', index }, text);
      if (index % 50 === 49) await nextTurn();
    }
    await logLines.until(
      (events) => events.filter((event) => event.event === 'flood').length === lines,
      'every flood line',
    );
    await logLines.until((events) => events.some((event) => event.event === 'events'), 'the drop logged');
    const dropped = logLines.events.find((event) => event.event === 'events');
    assert.equal(dropped?.level, 2, 'a warning, numbered as the reference numbers levels');
    assert.match(String(dropped?.message), /dropped/);
    const data = dropped?.data as Record<string, string>;
    assert.ok(Number(data.buffered_bytes) > 64 * 1024);
    const flood = logLines.events.filter((event) => event.event === 'flood');
    assert.deepEqual(
      flood.map((event) => Number((event.data as Record<string, string>).index)),
      Array.from({ length: lines }, (_, index) => index),
    );
    stalled.destroy();
    logLines.close();
  });
});
