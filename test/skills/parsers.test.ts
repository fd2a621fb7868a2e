import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  parseCodecs,
  parseDevices,
  parseFilters,
  parseFormats,
  parseHwaccels,
  parseProtocols,
  parseVersion,
} from '../../src/skills/parse-skills.js';

// Recorded from Debian's ffmpeg 5.1 by test/fixtures/ffmpeg/skills/record.sh.
const fixture = (name: string): string =>
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ffmpeg', 'skills', `${name}.txt`), 'utf8');

describe('skills parsers on recorded ffmpeg 5.1 output', () => {
  it('-version: Debian 5.1.9-0+deb12u1 becomes 5.1.9; compiler, configuration and libraries', () => {
    const version = parseVersion(fixture('version'));
    assert.equal(version.version, '5.1.9');
    assert.equal(version.compiler, 'gcc 12 (Debian 12.2.0-14+deb12u1)');
    assert.match(version.configuration, /^--prefix=\/usr .*--enable-shared$/);
    assert.equal(version.libraries.length, 8);
    assert.deepEqual(version.libraries[0], {
      name: 'libavutil',
      compiled: '57. 28.100',
      linked: '57. 28.100',
    });
  });

  it('-version: other spellings', () => {
    assert.equal(parseVersion('ffmpeg version 6.1 Copyright').version, '6.1.0');
    assert.equal(parseVersion('ffmpeg version n6.1.1 Copyright').version, '6.1.1');
    assert.equal(parseVersion('ffmpeg version 4.4.2-0ubuntu0.22.04.1 Copyright').version, '4.4.2');
    // A git build says nothing about its release: the UI's own message is the honest answer.
    assert.equal(parseVersion('ffmpeg version N-112233-gabcdef Copyright').version, '0.0.0');
    assert.deepEqual(parseVersion(''), { version: '0.0.0', compiler: '', configuration: '', libraries: [] });
  });

  it('-codecs: codecs sorted by kind, with their coders', () => {
    const codecs = parseCodecs(fixture('codecs'));
    const h264 = codecs.video.find((codec) => codec.id === 'h264');
    assert.ok(h264 !== undefined);
    assert.equal(h264.name, 'H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10');
    assert.ok(h264.encoders.includes('libx264'));
    assert.ok(h264.decoders.includes('h264'));
    const aac = codecs.audio.find((codec) => codec.id === 'aac');
    assert.deepEqual(aac?.encoders.includes('aac'), true);
    // Decode-only codec: no encoders, its own name as decoder.
    const fourxm = codecs.video.find((codec) => codec.id === '4xm');
    assert.deepEqual(fourxm, { id: '4xm', name: '4X Movie', decoders: ['4xm'], encoders: [] });
    assert.ok(codecs.subtitle.some((codec) => codec.id === 'subrip'));
    // An id with a dot (the reference's pattern misses it).
    assert.ok(codecs.audio.some((codec) => codec.id === 'acelp.kelvin'));
    // Legend lines (` D..... = Decoding supported`) are not codecs; data codecs are left out.
    const all = [...codecs.video, ...codecs.audio, ...codecs.subtitle];
    assert.ok(!all.some((codec) => codec.name.startsWith('=')));
    assert.equal(
      all.length,
      fixture('codecs')
        .split('\n')
        .filter((line) => /^ [D.][E.][VAS]/.test(line) && !line.includes(' = ')).length,
    );
  });

  it('-filters, -hwaccels, -protocols', () => {
    const filters = parseFilters(fixture('filters'));
    assert.deepEqual(
      filters.find((filter) => filter.id === 'scale'),
      { id: 'scale', name: 'Scale the input video size and/or convert the image format.' },
    );
    assert.ok(filters.length > 400);
    assert.ok(!filters.some((filter) => filter.id === 'T' || filter.name.startsWith('=')));
    assert.deepEqual(
      parseHwaccels(fixture('hwaccels')).map((accel) => accel.id),
      ['vdpau', 'cuda', 'vaapi', 'qsv', 'drm', 'opencl', 'vulkan'],
    );
    const protocols = parseProtocols(fixture('protocols'));
    assert.ok(protocols.input.some((protocol) => protocol.id === 'srt'));
    assert.ok(protocols.output.some((protocol) => protocol.id === 'rtmp'));
    assert.ok(!protocols.input.some((protocol) => protocol.id === 'Output'));
  });

  it('-formats and -devices: the first alias is the id, D/E sort into demuxers/muxers', () => {
    const formats = parseFormats(fixture('formats'));
    assert.ok(
      formats.demuxers.some((format) => format.id === 'matroska' && format.name === 'Matroska / WebM'),
    );
    assert.ok(formats.muxers.some((format) => format.id === 'hls'));
    assert.ok(formats.muxers.some((format) => format.id === 'flv'));
    assert.ok(!formats.demuxers.some((format) => format.id === '='));
    const devices = parseDevices(fixture('devices'));
    assert.deepEqual(
      devices.demuxers.find((device) => device.id === 'alsa'),
      { id: 'alsa', name: 'ALSA audio output', devices: [] },
    );
    assert.ok(devices.muxers.some((device) => device.id === 'opengl'));
    // A device without a description.
    assert.deepEqual(
      devices.demuxers.find((device) => device.id === 'libcdio'),
      { id: 'libcdio', name: '', devices: [] },
    );
  });

  it('garbage and empty input give empty lists, never a throw', () => {
    for (const text of ['', '\n\n', 'not ffmpeg at all\n \x00\xff', 'Input:\nOutput:\n']) {
      assert.deepEqual(parseCodecs(text), { audio: [], video: [], subtitle: [] });
      assert.deepEqual(parseFilters(text), []);
      assert.deepEqual(parseFormats(text), { demuxers: [], muxers: [] });
      assert.deepEqual(parseHwaccels(text), []);
      assert.deepEqual(parseProtocols(text), { input: [], output: [] });
    }
  });
});
