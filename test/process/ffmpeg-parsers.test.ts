import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  LineSplitter,
  maskCredentials,
  PreludeParser,
  ProgressBlockParser,
  parseStatsLine,
  parseVstatsLine,
  stripLogPrefixes,
  TRUNCATION_MARK,
  type ProgressBlock,
  type StatsLine,
} from '../../src/process/ffmpeg/index.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'ffmpeg');

/** The lines of a fixture as the server sees them: split on `\n` and `\r`, read in small chunks. */
function lines(name: string, chunkSize = 7): string[] {
  const bytes = readFileSync(join(FIXTURES, name));
  const result: string[] = [];
  const splitter = new LineSplitter({ maxLineLength: 8192, onLine: (line) => result.push(line) });
  for (let offset = 0; offset < bytes.length; offset += chunkSize)
    splitter.push(bytes.subarray(offset, offset + chunkSize));
  splitter.end();
  return result;
}

function stats(name: string): StatsLine[] {
  return lines(name)
    .map(parseStatsLine)
    .filter((line): line is StatsLine => line !== undefined);
}

function prelude(name: string) {
  const parser = new PreludeParser();
  for (const line of lines(name)) parser.push(line);
  return parser.result();
}

function blocks(name: string): ProgressBlock[] {
  const parser = new ProgressBlockParser();
  return lines(name)
    .map((line) => parser.push(line))
    .filter((block): block is ProgressBlock => block !== undefined);
}

describe('classic progress line (recorded with the ffmpeg the tests use)', () => {
  it('reads every stats line of a lavfi run to a null output', () => {
    const found = stats('testsrc-null.stderr.txt');
    assert.equal(found.length, 5);
    assert.deepEqual(
      found.map((line) => line.frame),
      [1, 11, 21, 31, 40],
    );
    const last = found.at(-1) as StatsLine;
    assert.equal(last.final, true);
    assert.equal(last.timeSeconds, 4);
    assert.equal(last.sizeBytes, undefined, 'size=N/A stays unknown');
    assert.equal(last.speed, 1.02);
    assert.equal(found[0]?.final, false);
  });

  it('reads lines with a [level] prefix', () => {
    const found = stats('level-prefix.stderr.txt');
    assert.equal(found.length, 5);
    assert.equal(found.at(-1)?.frame, 40);
    assert.deepEqual(found.at(-1)?.q, [25]);
  });

  it('reads one q per video output and the size of the first output', () => {
    const found = stats('av-two-outputs.stderr.txt');
    assert.deepEqual(found.at(-1)?.q, [25, -1]);
    assert.equal(found.at(-1)?.sizeBytes, 27 * 1024);
    assert.equal(found.at(-1)?.bitrateKbit, 55.6);
  });

  it('reads audio-only lines that start with size=', () => {
    const found = stats('audio-only.stderr.txt');
    assert.ok(found.length >= 4);
    for (const line of found) assert.equal(line.frame, undefined);
    assert.equal(found.at(-1)?.timeSeconds, 3.9);
    assert.equal(found.at(-1)?.sizeBytes, 34 * 1024);
  });

  it('reads hand-made audio-only lines, with and without prefix and N/A values', () => {
    const found = stats('audio-only.hand.txt');
    assert.equal(found.length, 3);
    assert.deepEqual(
      found.map((line) => [line.sizeBytes, line.timeSeconds]),
      [
        [512 * 1024, 32],
        [undefined, 33],
        [544 * 1024, 34],
      ],
    );
  });

  it('reads KiB sizes, dup and drop', () => {
    const found = stats('prefixed.hand.txt');
    assert.equal(found.length, 2);
    assert.deepEqual(found[0], {
      q: [-1],
      final: false,
      frame: 300,
      fps: 30,
      sizeBytes: 2048 * 1024,
      timeSeconds: 10.01,
      bitrateKbit: 1675.9,
      dup: 2,
      drop: 5,
      speed: 1,
    });
    assert.equal(found[1]?.final, true);
    assert.equal(found[1]?.drop, 6);
  });

  it('skips truncated lines and keeps lines whose single field is unreadable', () => {
    const found = stats('truncated.hand.txt');
    assert.deepEqual(
      found.map((line) => [line.frame, line.timeSeconds]),
      [
        [undefined, 4.04],
        [110, 4.4],
      ],
    );
  });

  it('is no stats line when it only looks like one', () => {
    assert.equal(parseStatsLine('frame rate is 25'), undefined);
    assert.equal(parseStatsLine('[info] Input #0, lavfi'), undefined);
    assert.equal(parseStatsLine('size=10kB'), undefined);
    assert.equal(parseStatsLine(''), undefined);
  });
});

describe('prelude', () => {
  it('reads inputs, outputs and the mapping of a run with two outputs', () => {
    const result = prelude('av-two-outputs.stderr.txt');
    assert.deepEqual(
      result.inputs.map((s) => [s.file, s.stream, s.format, s.type, s.codec]),
      [
        [0, 0, 'lavfi', 'video', 'rawvideo'],
        [1, 0, 'lavfi', 'audio', 'pcm_s16le'],
      ],
    );
    assert.equal(result.inputs[0]?.address, 'testsrc=size=64x48:rate=10');
    assert.deepEqual(
      [result.inputs[0]?.width, result.inputs[0]?.height, result.inputs[0]?.fps],
      [64, 48, 10],
    );
    assert.equal(result.inputs[0]?.pixFmt, 'rgb24');
    assert.deepEqual(
      [result.inputs[1]?.samplingHz, result.inputs[1]?.layout, result.inputs[1]?.channels],
      [44100, 'mono', 1],
    );
    // Output #1 is printed before the mapping and output #0 after it: both are found, in order.
    assert.deepEqual(
      result.outputs.map((s) => [s.file, s.stream, s.format, s.type, s.codec]),
      [
        [0, 0, 'mpegts', 'video', 'h264'],
        [0, 1, 'mpegts', 'audio', 'aac'],
        [1, 0, 'null', 'video', 'rawvideo'],
      ],
    );
    assert.equal(result.outputs[0]?.pixFmt, 'yuv444p');
    assert.deepEqual(
      result.mapping.map((m) => [m.inputs, m.output, m.copy]),
      [
        [[{ file: 0, stream: 0 }], { file: 0, stream: 0 }, false],
        [[{ file: 1, stream: 0 }], { file: 0, stream: 1 }, false],
        [[{ file: 0, stream: 0 }], { file: 1, stream: 0 }, true],
      ],
    );
  });

  it('reads prefixed lines, stream ids in brackets, languages and named layouts', () => {
    const result = prelude('prefixed.hand.txt');
    assert.equal(result.inputs.length, 2);
    assert.equal(result.inputs[0]?.fps, 29.97);
    assert.deepEqual([result.inputs[0]?.width, result.inputs[0]?.height], [1920, 1080]);
    assert.deepEqual(
      [result.inputs[1]?.layout, result.inputs[1]?.channels, result.inputs[1]?.samplingHz],
      ['5.1(side)', 6, 48000],
    );
    assert.equal(result.outputs.length, 2);
    assert.equal(result.outputs[0]?.format, 'flv');
    assert.equal(result.mapping[0]?.copy, true);
  });

  it('reads the stream lines of -loglevel verbose and debug (frame count, time base, reference frames)', () => {
    const parser = new PreludeParser();
    // Recorded with ffmpeg 5.1 at -loglevel debug.
    for (const line of [
      "Input #0, lavfi, from 'testsrc=size=32x24:rate=10':",
      '  Stream #0:0, 1, 1/10: Video: rawvideo, 1 reference frame (RGB[24] / 0x18424752), rgb24, 32x24 [SAR 1:1 DAR 4:3], 0/1, 10 tbr, 10 tbn',
      "Input #1, lavfi, from 'sine':",
      '  Stream #1:0, 1, 1/44100: Audio: pcm_s16le, 44100 Hz, mono, s16, 705 kb/s',
      "Output #0, mpegts, to '/tmp/x.ts':",
      '  Stream #0:0, 0, 1/90000: Video: h264, 1 reference frame, yuv444p(tv, progressive), 32x24 (0x0) [SAR 1:1 DAR 4:3], 0/1, q=2-31, 10 fps, 90k tbn',
      '  Stream #0:1, 0, 1/90000: Audio: aac (LC), 44100 Hz, mono, fltp, delay 1024, 69 kb/s',
    ]) {
      parser.push(line);
    }
    const result = parser.result();
    assert.deepEqual(
      result.inputs.map((s) => [s.type, s.codec, s.pixFmt, s.width, s.samplingHz]),
      [
        ['video', 'rawvideo', 'rgb24', 32, undefined],
        ['audio', 'pcm_s16le', undefined, undefined, 44100],
      ],
    );
    assert.deepEqual(
      result.outputs.map((s) => [s.type, s.codec, s.pixFmt, s.fps, s.channels]),
      [
        ['video', 'h264', 'yuv444p', 10, undefined],
        ['audio', 'aac', undefined, undefined, 1],
      ],
    );
  });

  it('reads complex filter graphs as several inputs feeding one output', () => {
    const parser = new PreludeParser();
    for (const line of [
      'Stream mapping:',
      '  Stream #0:0 (h264) -> hstack:input0 (graph 0)',
      '  Stream #1:0 (h264) -> hstack:input1 (graph 0)',
      '  hstack (graph 0) -> Stream #0:0 (libx264)',
      'Press [q] to stop, [?] for help',
    ]) {
      parser.push(line);
    }
    assert.deepEqual(parser.result().mapping, [
      {
        output: { file: 0, stream: 0 },
        inputs: [
          { file: 0, stream: 0 },
          { file: 1, stream: 0 },
        ],
        copy: false,
      },
    ]);
  });

  it('finds nothing in the output of a run whose input does not exist', () => {
    const result = prelude('missing-input.stderr.txt');
    assert.deepEqual(result, { inputs: [], outputs: [], mapping: [] });
    assert.ok(
      lines('missing-input.stderr.txt').includes('/nonexistent/input.mp4: No such file or directory'),
    );
  });
});

describe('-progress stream', () => {
  it('reads the blocks of a recorded run', () => {
    const found = blocks('av-two-outputs.progress.txt');
    assert.ok(found.length >= 4);
    const last = found.at(-1) as ProgressBlock;
    assert.equal(last.end, true);
    assert.equal(last.frame, 40);
    assert.equal(last.totalSizeBytes, 27824);
    assert.equal(last.outTimeSeconds, 4);
    assert.deepEqual(
      [...last.streamQ],
      [
        ['0:0', 25],
        ['1:0', -1],
      ],
    );
    assert.equal(found[0]?.end, false);
  });

  it('reads N/A values of an audio-only run as unknown', () => {
    const found = blocks('audio-only.progress.txt');
    assert.equal(found[0]?.frame, undefined);
    assert.equal(found[0]?.speed, undefined);
    assert.equal(found[1]?.totalSizeBytes, 9056);
  });
});

describe('-vstats stream', () => {
  it('reads one line per encoded video packet', () => {
    const parsed = lines('av-two-outputs.vstats.txt').map(parseVstatsLine);
    assert.equal(parsed.length, 40);
    assert.ok(parsed.every((line) => line?.file === 0 && line.stream === 0));
    assert.deepEqual(parsed[0], { file: 0, stream: 0, q: 25, frameBytes: 1523, keyframe: true });
    assert.equal(parsed[1]?.keyframe, false);
    assert.equal(parseVstatsLine('frame= 1 q= 2'), undefined);
  });
});

describe('line splitting', () => {
  it('splits on \\n, \\r\\n and \\r, across chunk boundaries, and keeps multi-byte characters whole', () => {
    const found: string[] = [];
    const splitter = new LineSplitter({ maxLineLength: 100, onLine: (line) => found.push(line) });
    const bytes = Buffer.from('one\r\ntwo\rthree\nvier – fünf\r');
    for (const byte of bytes) splitter.push(Buffer.from([byte]));
    splitter.push('last');
    splitter.end();
    assert.deepEqual(found, ['one', 'two', 'three', 'vier – fünf', 'last']);
  });

  it('cuts a huge line without holding it in memory', () => {
    const found: string[] = [];
    const splitter = new LineSplitter({ maxLineLength: 16, onLine: (line) => found.push(line) });
    for (let i = 0; i < 1000; i++) splitter.push('x'.repeat(1000));
    splitter.push('\nnext\n');
    assert.deepEqual(found, ['x'.repeat(16) + TRUNCATION_MARK, 'next']);
  });
});

describe('log prefixes and credentials', () => {
  it('strips level and component prefixes', () => {
    assert.equal(stripLogPrefixes('[info] frame=1'), 'frame=1');
    assert.equal(stripLogPrefixes('[libx264 @ 0x55d0c0a1b2c0] [info] profile High'), 'profile High');
    assert.equal(stripLogPrefixes('[hls @ 0x1] Opening'), 'Opening');
    assert.equal(stripLogPrefixes('[not a prefix]'), '[not a prefix]');
  });

  it('masks user info and secret query parameters', () => {
    assert.equal(
      maskCredentials("Opening 'http://admin:s3cr3t@127.0.0.1:8080/memfs/a.ts' for writing"),
      "Opening 'http://***:***@127.0.0.1:8080/memfs/a.ts' for writing",
    );
    assert.equal(maskCredentials('rtmp://key@host/app'), 'rtmp://***@host/app');
    assert.equal(
      maskCredentials('srt://h:9000?mode=caller&passphrase=verysecret&latency=200'),
      'srt://h:9000?mode=caller&passphrase=***&latency=200',
    );
    assert.equal(maskCredentials('testsrc=size=64x48:rate=10'), 'testsrc=size=64x48:rate=10');
  });

  it('masks the credentials of Authorization and Proxy-Authorization header lines, any scheme', () => {
    // What ffmpeg 5.1 prints at -loglevel debug after the 401 of an HTTP PUT with user info.
    assert.equal(
      maskCredentials('Authorization: Basic YWRtaW46dG9wc2VjcmV0cHc='),
      'Authorization: Basic ***',
    );
    assert.equal(maskCredentials('authorization: Bearer eyJhbGciOi.x.y'), 'authorization: Bearer ***');
    assert.equal(
      maskCredentials('Proxy-Authorization: Digest username="admin", response="6629fae4"'),
      'Proxy-Authorization: Digest ***',
    );
    assert.equal(maskCredentials('[http @ 0x1] Authorization:token-only'), '[http @ 0x1] Authorization:***');
    // A header block inside one option value (-headers): each header line on its own.
    assert.equal(
      maskCredentials('X-Id: 7\r\nAuthorization: Bearer abc\r\nUser-Agent: x\r\n'),
      'X-Id: 7\r\nAuthorization: Bearer ***\r\nUser-Agent: x\r\n',
    );
    assert.equal(
      maskCredentials('WWW-Authenticate: Basic realm="memfs"'),
      'WWW-Authenticate: Basic realm="memfs"',
    );
    assert.equal(maskCredentials('Host: 127.0.0.1:8080'), 'Host: 127.0.0.1:8080');
  });
});
