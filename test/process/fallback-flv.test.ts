import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fallbackFeederArgs,
  fallbackKind,
  primaryFeederArgs,
} from '../../src/process/fallback/feeder-args.js';
import {
  encodeFlvTag,
  FLV_HEADER,
  FlvTagReader,
  TAG_AUDIO,
  TAG_VIDEO,
  type FlvTag,
} from '../../src/process/fallback/flv.js';
import { DEFAULT_SHAPE } from '../../src/process/fallback/stream-shape.js';

describe('fallback relay: FLV and feeder command lines', () => {
  it('reads back the tags it writes, however the bytes are cut, timestamps past 24 bits included', () => {
    const tags: FlvTag[] = [
      { type: TAG_VIDEO, timestamp: 0, body: Buffer.from([0x17, 0, 1, 2]) },
      { type: TAG_AUDIO, timestamp: 23, body: Buffer.from([0xaf, 1, 9, 9, 9]) },
      { type: TAG_VIDEO, timestamp: 0x1234567, body: Buffer.alloc(70_000, 7) },
    ];
    const bytes = Buffer.concat([FLV_HEADER, ...tags.map(encodeFlvTag)]);
    for (const cut of [1, 7, 13, 100, bytes.length]) {
      const read: FlvTag[] = [];
      const reader = new FlvTagReader((tag) => read.push({ ...tag, body: Buffer.from(tag.body) }));
      for (let offset = 0; offset < bytes.length; offset += cut)
        reader.push(bytes.subarray(offset, offset + cut));
      assert.deepEqual(read, tags, `cut every ${cut} bytes`);
    }
    assert.throws(
      () => new FlvTagReader(() => undefined).push(Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\n')),
      /not an FLV/,
    );
  });

  it('reads an image, a file and a live source each its way, and an RTMP primary without analysing it first', () => {
    assert.equal(fallbackKind('/data/brb.PNG'), 'image');
    assert.equal(fallbackKind('file:/data/brb.jpg'), 'image');
    assert.equal(fallbackKind('/data/loop.mp4'), 'file');
    assert.equal(fallbackKind('rtmp://127.0.0.1/live/backup'), 'live');
    assert.equal(fallbackKind('srt://127.0.0.1:6000?mode=caller'), 'live');

    const image = fallbackFeederArgs('/data/brb.png', [], { ...DEFAULT_SHAPE, width: 640, height: 360 }).join(
      ' ',
    );
    assert.match(
      image,
      /-re -loop 1 -framerate 25 -i \/data\/brb\.png -re -f lavfi -i anullsrc=r=44100:cl=stereo/,
    );
    assert.match(image, /scale=640:360:/);
    assert.match(image, /-c:v libx264 .*-g 25 -c:a aac -ar 44100 -ac 2 -f flv pipe:1$/);
    const silent = fallbackFeederArgs('/data/loop.mp4', ['-ss', '3'], {
      ...DEFAULT_SHAPE,
      audio: undefined,
    }).join(' ');
    assert.match(silent, /-re -stream_loop -1 -ss 3 -i \/data\/loop\.mp4 -map 0:v:0 -an/);
    assert.doesNotMatch(silent, /anullsrc|-c:a/);

    assert.match(
      primaryFeederArgs('rtmp://h/live/x', ['-rw_timeout', '5000000']).join(' '),
      /-analyzeduration 0 -probesize 32 -rw_timeout 5000000 -i rtmp:\/\/h\/live\/x -map 0:v:0\? -map 0:a:0\? -c copy -f flv pipe:1/,
    );
    assert.doesNotMatch(primaryFeederArgs('srt://h:6000', []).join(' '), /analyzeduration/);
  });
});
