import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Logger } from 'pino';
import { createServerLogger, LogBuffer } from '../../src/log/index.js';
import { consoleLine, parsePinoLine } from '../../src/log/log-event.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, waitFor } from '../process/support.js';

const JWT_SECRET = 'jwt-secret-value-123456';
const MEMFS_PASSWORD = 'memfs-password-987';
/** The reference's console form, as the UI's Logs tab shows it. */
const CONSOLE_LINE =
  /^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ level=(DEBUG|INFO|WARN|ERROR) component="[^"]*"( msg=".*")?( \w+=.*)?$/;

function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

describe('log API', () => {
  let server: TestServer;
  let logger: Logger;
  before(async () => {
    const buffer = new LogBuffer(50);
    logger = createServerLogger('info', buffer, discard());
    server = await startServer({
      logger,
      logBuffer: buffer,
      config: {
        api: { auth: { jwt: { secret: JWT_SECRET } } },
        storage: { memory: { auth: { enable: true, password: MEMFS_PASSWORD } } },
      },
    });
  });
  after(() => server.close());

  it('answers the recent lines in the console form, oldest first (the UI joins them with newlines)', async () => {
    logger.info({ component: 'test', n: 1, text: 'a "quoted" word' }, 'first marker');
    logger.warn({ n: 2 }, 'second marker');
    const lines = await ok<unknown[]>(server, 'GET', '/log');
    assert.ok(Array.isArray(lines));
    for (const line of lines) {
      assert.equal(typeof line, 'string');
      assert.match(line as string, CONSOLE_LINE);
    }
    const first = lines.findIndex((line) => (line as string).includes('first marker'));
    const second = lines.findIndex((line) => (line as string).includes('second marker'));
    assert.ok(first >= 0 && second > first, JSON.stringify(lines));
    assert.match(
      lines[first] as string,
      / level=INFO component="test" msg="first marker" n=1 text="a \\"quoted\\" word"$/,
    );
    assert.match(lines[second] as string, / level=WARN component="streamcore" msg="second marker" n=2$/);
    // An empty format is the default, as in the reference.
    assert.deepEqual(await ok<unknown[]>(server, 'GET', '/log?format='), lines);
  });

  it('?format=raw answers objects with ts, component, message and the fields', async () => {
    logger.error({ component: 'raw-test', code: 7 }, 'raw marker');
    const events = await ok<Record<string, unknown>[]>(server, 'GET', '/log?format=raw');
    const event = events.find((item) => item.message === 'raw marker');
    assert.ok(event !== undefined);
    assert.equal(event.component, 'raw-test');
    assert.equal(event.code, 7);
    assert.equal(event.level, 'ERROR');
    assert.ok(!Number.isNaN(Date.parse(event.ts as string)));
    assert.ok(!('pid' in event) && !('hostname' in event));
  });

  it('masks secrets: secret-named fields, URL user info, and the configured secrets anywhere', async () => {
    logger.info(
      {
        password: 'hunter2',
        nested: { token: 'abc', address: 'rtmp://user:pass@example.com/live' },
        note: `the secret is ${JWT_SECRET}`,
      },
      `memfs uses ${MEMFS_PASSWORD}`,
    );
    for (const format of ['', 'raw']) {
      const answer = await call(server, 'GET', `/log?format=${format}`);
      assert.equal(answer.status, 200);
      for (const secret of ['hunter2', JWT_SECRET, MEMFS_PASSWORD, 'user:pass@', '"abc"']) {
        assert.ok(!answer.text.includes(secret), `${secret} leaked in format=${format}`);
      }
      assert.ok(answer.text.includes('rtmp://***@example.com/live'));
    }
  });

  it("logs each process's state changes, with ffmpeg's last line when it failed", async () => {
    const running = lavfiProcess('log-life', { autostart: true });
    const failing = lavfiProcess('log-fails', {
      autostart: true,
      reconnect: false,
      input: [{ id: 'in', address: 'no_such_source_filter', options: ['-f', 'lavfi'] }],
    });
    await ok(server, 'POST', '/process', running);
    await ok(server, 'POST', '/process', failing);
    const lines = await waitFor(
      async () => {
        const all = await ok<string[]>(server, 'GET', '/log');
        const wanted = [/msg="process running".* id="log-life" /, /msg="process failed".* id="log-fails" /];
        return wanted.every((pattern) => all.some((line) => pattern.test(line))) ? all : undefined;
      },
      15_000,
      'the running and failed lines',
    );
    const failed = lines.find(
      (line) => line.includes('msg="process failed"') && line.includes('id="log-fails"'),
    );
    assert.match(failed ?? '', /component="process"/);
    assert.match(failed ?? '', /from="(starting|running)" /);
    assert.match(failed ?? '', /last_logline="[^"]*no_such_source_filter/i);
    await ok(server, 'DELETE', '/process/log-life');
    await ok(server, 'DELETE', '/process/log-fails');
  });

  it('keeps only the most recent lines (bounded ring)', async () => {
    for (let n = 0; n < 120; n += 1) logger.info({ n }, 'flood');
    const lines = await ok<string[]>(server, 'GET', '/log');
    assert.equal(lines.length, 50);
    assert.match(lines.at(-1) ?? '', /msg="flood" n=119$/);
    assert.match(lines[0] ?? '', /msg="flood" n=70$/);
  });
});

describe('log buffer and event parts', () => {
  it('a ring of 3 keeps the last 3 lines in order; long lines are cut', () => {
    const buffer = new LogBuffer(3);
    buffer.write('a\nb\n');
    buffer.write('c\nd\ne\n');
    assert.deepEqual(buffer.lines(), ['c', 'd', 'e']);
    buffer.write(`${'x'.repeat(100_000)}\n`);
    assert.equal(buffer.lines().at(-1)?.length, 16 * 1024);
    assert.throws(() => new LogBuffer(0), /maxLines/);
  });

  it('a line that is not JSON is a plain message', () => {
    const event = parsePinoLine('not json {');
    assert.equal(event.message, 'not json {');
    assert.match(consoleLine(event), /^ts=1970-01-01T00:00:00Z level=INFO component="" msg="not json \{"$/);
  });
});
