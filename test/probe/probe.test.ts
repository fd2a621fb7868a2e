import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseProbe } from '../../src/probe/index.js';
import { ProbeSlots } from '../../src/probe/probe-slots.js';
import { runProbe } from '../../src/probe/run-probe.js';
import { assertItemTypes } from '../compat/client-checks.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

const fixture = (name: string): string[] =>
  readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'ffmpeg', 'probe', `${name}.stderr.txt`),
    'utf8',
  ).split('\n');

interface ProbeAnswer {
  streams: Record<string, unknown>[];
  log: string[];
}

/** The types core-client-go decodes api.ProbeIO into, and the UI's wizard reads. */
const STREAM_TYPES = {
  url: 'string',
  format: 'string',
  index: 'number',
  stream: 'number',
  language: 'string',
  type: 'string',
  codec: 'string',
  coder: 'string',
  bitrate_kbps: 'number',
  duration_sec: 'number',
  fps: 'number',
  pix_fmt: 'string',
  width: 'number',
  height: 'number',
  sampling_hz: 'number',
  layout: 'string',
  channels: 'number',
};

describe('probe parser on recorded ffmpeg 5.1 output', () => {
  it('a file with H.264 and AAC: codec, size, fps, bitrate, language, duration', () => {
    const [video, audio, ...rest] = parseProbe(fixture('av-file'));
    assert.equal(rest.length, 0);
    assert.deepEqual(video, {
      url: 'av.mp4',
      format: 'mov,mp4,m4a,3gp,3g2,mj2',
      index: 0,
      stream: 0,
      language: 'und',
      type: 'video',
      codec: 'h264',
      coder: '',
      bitrate_kbps: 47,
      duration_sec: 2,
      fps: 25,
      pix_fmt: 'yuv444p',
      width: 320,
      height: 240,
      sampling_hz: 0,
      layout: '',
      channels: 0,
    });
    assert.equal(audio?.codec, 'aac');
    assert.equal(audio?.language, 'deu');
    assert.equal(audio?.sampling_hz, 48000);
    assert.equal(audio?.layout, 'stereo');
    assert.equal(audio?.channels, 2);
  });

  it('two live lavfi inputs: the frame rate from tbr, indices per input, duration 0', () => {
    const streams = parseProbe(fixture('lavfi-two'));
    assert.deepEqual(
      streams.map((s) => [
        s.index,
        s.stream,
        s.type,
        s.codec,
        s.fps,
        s.width,
        s.sampling_hz,
        s.channels,
        s.duration_sec,
      ]),
      [
        [0, 0, 'video', 'rawvideo', 25, 320, 0, 0, 0],
        [1, 0, 'audio', 'pcm_s16le', 0, 0, 44100, 1, 0],
      ],
    );
  });

  it('an input that cannot be opened: no streams', () => {
    assert.deepEqual(parseProbe(fixture('missing')), []);
    assert.deepEqual(parseProbe(['', 'garbage', 'Stream #0:0: Video: h264']), []);
  });
});

describe('probe API with the real ffmpeg', () => {
  let server: TestServer;
  let closedPort: number;
  before(async () => {
    server = await startServer();
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
  });
  after(() => server.close());

  it('answers the streams of a process inputs (placeholders resolved) and the log', async () => {
    await ok(server, 'POST', '/process', {
      id: 'probe-me',
      reference: 'size',
      autostart: false,
      input: [
        { id: 'video', address: 'testsrc=size=64x48:rate=25', options: ['-f', 'lavfi'] },
        { id: 'audio', address: 'sine=sample_rate=44100', options: ['-f', 'lavfi'] },
      ],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    });
    const probe = await ok<ProbeAnswer>(server, 'GET', '/process/probe-me/probe');
    assert.ok(Array.isArray(probe.log) && probe.log.length > 0);
    assert.equal(probe.streams.length, 2, probe.log.join('\n'));
    assertItemTypes(probe.streams, STREAM_TYPES, 'stream');
    assert.equal(probe.streams[0]?.fps, 25);
    assert.equal(probe.streams[0]?.width, 64);
    assert.equal(probe.streams[1]?.sampling_hz, 44100);
  });

  it('an input that cannot be opened: 200 with no streams and the log saying why (as the reference)', async () => {
    await ok(server, 'POST', '/process', {
      id: 'unreachable',
      autostart: false,
      input: [{ id: 'in', address: `tcp://127.0.0.1:${closedPort}`, options: [] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    });
    const probe = await ok<ProbeAnswer>(server, 'GET', '/process/unreachable/probe');
    assert.deepEqual(probe.streams, []);
    assert.match(probe.log.join('\n'), /Connection refused/);
  });

  it('probes a config sent in the body without creating a process', async () => {
    const probe = await ok<ProbeAnswer>(server, 'POST', '/process/probe', {
      id: 'not-created',
      input: [{ id: 'video', address: 'testsrc=size=64x48:rate=25', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '{diskfs}/x.mp4', options: ['-f', 'null'] }],
    });
    assert.equal(probe.streams.length, 1, probe.log.join('\n'));
    assert.equal(probe.streams[0]?.width, 64);
    const missing = await call(server, 'GET', '/process/not-created');
    assert.equal(missing.status, 404, 'not created');
    // Checked as a create is: the same 400 with the field named.
    const invalid = await call<{ code: number; details: string[] }>(server, 'POST', '/process/probe', {
      input: [],
      output: [{ id: 'out', address: '-', options: [] }],
    });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.details.join('\n'), /input: at least one input is required/);
  });

  it('a process that does not exist: 404 in the envelope', async () => {
    const answer = await call<{ code: number; details: string[] }>(server, 'GET', '/process/nobody/probe');
    assert.equal(answer.status, 404);
    assert.equal(answer.body.code, 404);
  });
});

describe('probe bounds', () => {
  let silent: Server;
  let port: number;
  const sockets: Socket[] = [];
  before(async () => {
    // Accepts and never answers: ffmpeg waits for data until it is killed.
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as { port: number }).port;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('a probe that runs over its time is killed and says so', async () => {
    const run = await runProbe(spawn, 'ffmpeg', ['-f', 'mpegts', '-i', `tcp://127.0.0.1:${port}`], {
      timeoutMs: 1500,
      maxLines: 100,
    });
    assert.equal(run.timedOut, true);
    assert.match(run.lines.at(-1) ?? '', /probe stopped after 1500 ms/);
  });

  it('a missing binary gives a log line, not a throw', async () => {
    const run = await runProbe(spawn, '/nonexistent/ffmpeg', ['-i', 'x'], { timeoutMs: 1000, maxLines: 10 });
    assert.match(run.lines.join('\n'), /could not be started/);
  });

  it('slots: at most N run, M wait, the rest are refused with 503', async () => {
    const slots = new ProbeSlots(1, 1);
    let release: () => void = () => undefined;
    const first = slots.run(() => new Promise<void>((resolve) => (release = resolve)));
    const second = slots.run(() => Promise.resolve('second'));
    await assert.rejects(
      slots.run(() => Promise.resolve('third')),
      (error: { status: number }) => error.status === 503,
    );
    release();
    await first;
    assert.equal(await second, 'second');
    assert.equal(await slots.run(() => Promise.resolve('again')), 'again');
  });
});
