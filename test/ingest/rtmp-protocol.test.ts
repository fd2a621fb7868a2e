import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Amf0Error, decodeAmf0, encodeAmf0, type Amf0Value } from '../../src/ingest/rtmp/amf0.js';
import { ChunkReader } from '../../src/ingest/rtmp/chunk-reader.js';
import { encodeChunks } from '../../src/ingest/rtmp/chunk-writer.js';
import { classifyTag } from '../../src/ingest/rtmp/flv-tag.js';
import { ServerHandshake } from '../../src/ingest/rtmp/handshake.js';
import { RtmpProtocolError, type RtmpMessage } from '../../src/ingest/rtmp/message.js';
import { parseStreamPath } from '../../src/ingest/rtmp/stream-path.js';

/** A small deterministic generator, so a failing fuzz case can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function setChunkSizeMessage(size: number): RtmpMessage {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(size);
  return { typeId: 1, streamId: 0, timestamp: 0, payload };
}

function readAll(bytes: Buffer, split: (length: number) => number[], max = 1 << 20): RtmpMessage[] {
  const messages: RtmpMessage[] = [];
  const reader = new ChunkReader({ maxMessageBytes: max, maxChunkStreams: 64 }, (message) =>
    messages.push(message),
  );
  let offset = 0;
  for (const size of split(bytes.length)) {
    reader.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return messages;
}

describe('AMF0', () => {
  it('round-trips the values commands use', () => {
    const values: Amf0Value[] = [
      'connect',
      1,
      { app: 'live', tcUrl: 'rtmp://h/live', nested: { a: [1, 'x', null], b: true } },
      null,
      undefined,
      -0.5,
      'ü'.repeat(70_000),
      new Date(1_700_000_000_000),
    ];
    const decoded = decodeAmf0(encodeAmf0(values));
    assert.deepEqual(JSON.parse(JSON.stringify(decoded)), JSON.parse(JSON.stringify(values)));
    assert.equal((decoded[7] as Date).getTime(), 1_700_000_000_000);
  });

  it('decodes an ECMA array and keeps __proto__ an ordinary key', () => {
    const bytes = Buffer.concat([
      Buffer.from([0x08, 0, 0, 0, 1, 0, 9]),
      Buffer.from('__proto__'),
      encodeAmf0([5]),
      Buffer.from([0, 0, 9]),
    ]);
    const [object] = decodeAmf0(bytes) as [Record<string, unknown>];
    assert.equal(object['__proto__'], 5);
    assert.equal(Object.getPrototypeOf(object), null);
  });

  it('refuses truncated values, unknown markers, deep nesting and lying array counts', () => {
    const good = encodeAmf0([{ a: 'text' }]);
    for (let end = 1; end < good.length; end++) {
      assert.throws(() => decodeAmf0(good.subarray(0, end)), Amf0Error, `cut at ${end}`);
    }
    assert.throws(() => decodeAmf0(Buffer.from([0x11])), /unsupported marker/);
    assert.throws(() => decodeAmf0(Buffer.alloc(100, 0x0a).fill(0, 1, 4)), Amf0Error);
    // {a: {a: {a: …}}} 10 000 levels deep.
    const deep = Buffer.concat([
      Buffer.from([0x03]),
      Buffer.alloc(4 * 10_000, Buffer.from([0x00, 0x01, 0x61, 0x03])),
    ]);
    assert.throws(() => decodeAmf0(deep), /nesting deeper/);
    assert.throws(() => decodeAmf0(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x05])), /array of/);
  });

  it('throws only Amf0Error on 5000 mutated and random inputs', () => {
    const next = random(1);
    const base = encodeAmf0(['onMetaData', { width: 1280, encoder: 'Lavf', list: [1, 2, { x: null }] }]);
    for (let round = 0; round < 5000; round++) {
      const bytes = round % 2 === 0 ? Buffer.from(base) : randomBytes(1 + Math.floor(next() * 64));
      if (round % 2 === 0) {
        for (let flips = 0; flips < 3; flips++)
          bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      }
      try {
        decodeAmf0(bytes);
      } catch (error) {
        assert.ok(error instanceof Amf0Error, `round ${round}: ${String(error)}`);
      }
    }
  });
});

describe('chunk stream', () => {
  it('reassembles what the writer chunked, for any chunk size, chunk stream id and split', () => {
    const next = random(2);
    for (let round = 0; round < 300; round++) {
      const chunkSize = [1, 7, 128, 4096, 65_536][round % 5] as number;
      const messages: RtmpMessage[] = [];
      for (let index = 0; index < 8; index++) {
        const extended = next() < 0.3;
        messages.push({
          typeId: [8, 9, 18, 20][index % 4] as number,
          streamId: Math.floor(next() * 3),
          timestamp: extended ? 0xffffff + Math.floor(next() * 1e6) : Math.floor(next() * 0xffffff),
          payload: randomBytes(Math.floor(next() * 3000)),
        });
      }
      const csids = [2, 3, 63, 64, 319, 320, 65_599];
      const bytes = Buffer.concat([
        encodeChunks(setChunkSizeMessage(chunkSize), 2, 128),
        ...messages.map((message, index) =>
          encodeChunks(message, csids[index % csids.length] as number, chunkSize),
        ),
      ]);
      const got = readAll(bytes, (length) => {
        const sizes: number[] = [];
        for (let left = length; left > 0;) {
          const size = Math.min(left, 1 + Math.floor(next() * 700));
          sizes.push(size);
          left -= size;
        }
        return sizes;
      });
      assert.equal(got.length, messages.length + 1, `round ${round}`);
      assert.deepEqual(got.slice(1), messages, `round ${round}`);
    }
  });

  it('applies type 1, 2 and 3 headers with timestamp deltas as ffmpeg writes them', () => {
    // csid 4: type 0 at 1000 (length 2, audio), type 2 delta 20, type 3 (same delta), type 1 delta 5 length 1.
    const bytes = Buffer.from([
      0x04,
      0,
      0x03,
      0xe8,
      0,
      0,
      2,
      8,
      1,
      0,
      0,
      0,
      0xaa,
      0xbb,
      0x84 | (0x40 * 0 + 0x80),
      0,
      0,
      20,
      0xcc,
      0xdd,
      0xc4,
      0xee,
      0xff,
      0x44,
      0,
      0,
      5,
      0,
      0,
      1,
      8,
      0x11,
    ]);
    const got = readAll(bytes, (length) => [length]);
    assert.deepEqual(
      got.map((message) => [message.timestamp, message.payload.toString('hex')]),
      [
        [1000, 'aabb'],
        [1020, 'ccdd'],
        [1040, 'eeff'],
        [1045, '11'],
      ],
    );
  });

  it('refuses oversized messages, headerless chunk streams and too many chunk streams', () => {
    const big = encodeChunks({ typeId: 9, streamId: 1, timestamp: 0, payload: Buffer.alloc(2000) }, 6, 128);
    assert.throws(() => readAll(big, (length) => [length], 1000), /over 1000/);
    assert.throws(
      () => readAll(Buffer.from([0x46, 0, 0, 0, 0, 0, 1, 8, 0]), (length) => [length]),
      /starts with a type-1/,
    );
    const many = Buffer.concat(
      Array.from({ length: 70 }, (_, index) =>
        encodeChunks({ typeId: 8, streamId: 1, timestamp: 0, payload: Buffer.alloc(1) }, 3 + index, 128),
      ),
    );
    assert.throws(() => readAll(many, (length) => [length]), /more than 64 chunk streams/);
  });

  it('holds no more than its bounds and throws only RtmpProtocolError on 3000 mutated streams', () => {
    const next = random(3);
    const max = 64 * 1024;
    const valid = Buffer.concat(
      Array.from({ length: 20 }, (_, index) =>
        encodeChunks(
          {
            typeId: 9,
            streamId: 1,
            timestamp: index * 40,
            payload: randomBytes(1 + Math.floor(next() * 5000)),
          },
          6,
          index % 2 === 0 ? 128 : 4096,
        ),
      ),
    );
    for (let round = 0; round < 3000; round++) {
      const bytes = round % 3 === 0 ? randomBytes(1 + Math.floor(next() * 20_000)) : Buffer.from(valid);
      if (round % 3 !== 0) {
        for (let flips = 0; flips < 1 + (round % 8); flips++)
          bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      }
      const reader = new ChunkReader({ maxMessageBytes: max, maxChunkStreams: 64 }, () => undefined);
      try {
        for (let offset = 0; offset < bytes.length; offset += 1500) {
          reader.push(bytes.subarray(offset, offset + 1500));
          assert.ok(
            reader.bufferedBytes <= 2 * max + 18,
            `round ${round}: ${reader.bufferedBytes} bytes held`,
          );
        }
      } catch (error) {
        assert.ok(error instanceof RtmpProtocolError, `round ${round}: ${String(error)}`);
      }
    }
  });
});

describe('handshake', () => {
  it('answers C0+C1 with S0+S1+S2 echoing C1, then hands over what follows C2', () => {
    const handshake = new ServerHandshake(() => 12_345);
    const c1 = randomBytes(1536);
    const first = handshake.push(Buffer.concat([Buffer.from([3]), c1.subarray(0, 100)]));
    assert.equal(first.reply, undefined);
    const second = handshake.push(c1.subarray(100));
    assert.equal(second.reply?.length, 3073);
    assert.equal(second.reply?.[0], 3);
    assert.deepEqual(second.reply?.subarray(5, 9), Buffer.alloc(4), 'S1 has zero version bytes');
    assert.deepEqual(second.reply?.subarray(1537, 1541), c1.subarray(0, 4));
    assert.deepEqual(second.reply?.subarray(1545), c1.subarray(8));
    const third = handshake.push(Buffer.concat([randomBytes(1536), Buffer.from('rest')]));
    assert.equal(third.rest?.toString(), 'rest');
    assert.ok(handshake.done);
  });

  it('refuses other versions (RTMPE is 6)', () => {
    assert.throws(() => new ServerHandshake(Date.now).push(Buffer.alloc(1537, 6)), /version 6/);
  });
});

describe('stream paths and tags', () => {
  it('takes the token from the query or, when one is configured, the last path element', () => {
    assert.deepEqual(parseStreamPath('live', 'abc?token=t1', true), { path: '/live/abc', token: 't1' });
    assert.deepEqual(parseStreamPath('live?token=t2', 'abc', true), { path: '/live/abc', token: 't2' });
    assert.deepEqual(parseStreamPath('live', 'abc/t3', true), { path: '/live/abc', token: 't3' });
    assert.deepEqual(parseStreamPath('live', 'abc/t3', false), { path: '/live/abc/t3', token: '' });
    assert.deepEqual(parseStreamPath('', 'abc?token=x', true), { path: '/abc', token: 'x' });
    assert.deepEqual(parseStreamPath('live', 'abc', true), { path: '/live', token: 'abc' });
    assert.equal(parseStreamPath('live', '', false)?.path, '/live');
    assert.equal(parseStreamPath('', '', false), undefined);
    assert.equal(parseStreamPath('live', '../x', false), undefined);
    assert.equal(parseStreamPath('live', 'a\nb', false), undefined);
    assert.equal(parseStreamPath('live', 'a'.repeat(2000), false), undefined);
  });

  it('classifies sequence headers and keyframes of AVC, HEVC, enhanced RTMP and AAC', () => {
    assert.equal(classifyTag(9, Buffer.from([0x17, 0])), 'sequence-header');
    assert.equal(classifyTag(9, Buffer.from([0x17, 1])), 'keyframe');
    assert.equal(classifyTag(9, Buffer.from([0x27, 1])), 'frame');
    assert.equal(classifyTag(9, Buffer.from([0x1c, 0])), 'sequence-header');
    assert.equal(classifyTag(9, Buffer.from([0x90, 0x68, 0x76, 0x63, 0x31])), 'sequence-header');
    assert.equal(classifyTag(9, Buffer.from([0x91, 0x68, 0x76, 0x63, 0x31])), 'keyframe');
    assert.equal(classifyTag(9, Buffer.from([0xa1])), 'frame');
    assert.equal(classifyTag(8, Buffer.from([0xaf, 0])), 'sequence-header');
    assert.equal(classifyTag(8, Buffer.from([0xaf, 1])), 'frame');
    assert.equal(classifyTag(8, Buffer.alloc(0)), 'frame');
  });
});
