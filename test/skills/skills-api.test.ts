import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertArrays, assertItemTypes, assertSemver, uiAcceptsFfmpeg } from '../compat/client-checks.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok } from '../process/support.js';

interface SkillsAnswer {
  ffmpeg: { version: string; compiler: string; configuration: string; libraries: unknown[] };
  filter: unknown[];
  hwaccels: unknown[];
  codecs: Record<'audio' | 'video' | 'subtitle', { id: string; encoders: string[]; decoders: string[] }[]>;
  devices: Record<'demuxers' | 'muxers', { id: string; devices: unknown[] }[]>;
  formats: Record<'demuxers' | 'muxers', { id: string }[]>;
  protocols: Record<'input' | 'output', { id: string }[]>;
}

const ARRAYS = [
  'ffmpeg.libraries',
  'filter',
  'hwaccels',
  'codecs.audio',
  'codecs.video',
  'codecs.subtitle',
  'devices.demuxers',
  'devices.muxers',
  'formats.demuxers',
  'formats.muxers',
  'protocols.input',
  'protocols.output',
];

/** The checks the Restreamer UI applies in `_initSkills` and `Compatibility()`. */
function assertUiShape(skills: SkillsAnswer): void {
  assertSemver(skills.ffmpeg.version, 'ffmpeg.version');
  assertArrays(skills, ARRAYS);
  for (const kind of ['audio', 'video', 'subtitle'] as const) {
    assertItemTypes(
      skills.codecs[kind],
      { id: 'string', name: 'string', encoders: 'array', decoders: 'array' },
      kind,
    );
  }
  for (const list of [skills.filter, skills.hwaccels, skills.formats.demuxers, skills.protocols.input]) {
    assertItemTypes(list, { id: 'string', name: 'string' }, 'item');
  }
  for (const device of [...skills.devices.demuxers, ...skills.devices.muxers])
    assertArrays(device, ['devices']);
}

describe('skills API with the real ffmpeg', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('answers what the binary can do, in the shape the UI reads, with a version the UI accepts', async () => {
    const skills = await ok<SkillsAnswer>(server, 'GET', '/skills');
    assertUiShape(skills);
    assert.ok(uiAcceptsFfmpeg(skills.ffmpeg.version), skills.ffmpeg.version);
    assert.ok(skills.codecs.video.some((codec) => codec.id === 'h264' && codec.encoders.includes('libx264')));
    assert.ok(skills.formats.muxers.some((format) => format.id === 'hls'));
    assert.ok(skills.protocols.input.some((protocol) => protocol.id === 'rtmp'));
    assert.ok(skills.filter.length > 100);
    // The fields in the reference's order (its Go structs'), as the wire always had them.
    assert.deepEqual(Object.keys(skills), [
      'ffmpeg',
      'filter',
      'hwaccels',
      'codecs',
      'devices',
      'formats',
      'protocols',
    ]);
    assert.deepEqual(Object.keys(skills.codecs.video[0] ?? {}), ['id', 'name', 'encoders', 'decoders']);
  });

  it('reload runs the binary again and answers the same skills', async () => {
    const before = await ok<SkillsAnswer>(server, 'GET', '/skills');
    const [first, second] = await Promise.all([
      ok<SkillsAnswer>(server, 'GET', '/skills/reload'),
      ok<SkillsAnswer>(server, 'GET', '/skills/reload'),
    ]);
    assert.deepEqual(first, before);
    assert.deepEqual(second, before);
  });
});

describe('skills at start', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-skills-start-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('runs the binary once at start; a request right after the start gets that run, not empty lists', async () => {
    // The real ffmpeg behind a script that notes each listing it is asked for.
    const calls = join(dir, 'calls');
    const binary = join(dir, 'ffmpeg-noting');
    await writeFile(binary, `#!/bin/sh\necho "$*" >> '${calls}'\nexec ffmpeg "$@"\n`);
    await chmod(binary, 0o755);
    const server = await startServer({ config: { ffmpeg: { binary } } });
    try {
      const [first, second] = await Promise.all([
        ok<SkillsAnswer>(server, 'GET', '/skills'),
        ok<SkillsAnswer>(server, 'GET', '/skills'),
      ]);
      assert.ok(first.codecs.video.some((codec) => codec.id === 'h264'));
      assert.deepEqual(second, first);
      const again = await ok<SkillsAnswer>(server, 'GET', '/skills');
      assert.deepEqual(again, first);
      const listings = (await readFile(calls, 'utf8')).split('\n').filter((line) => line.includes('-codecs'));
      assert.deepEqual(listings, ['-hide_banner -codecs']);
    } finally {
      await server.close();
    }
  });
});

describe('skills API with a missing or broken binary', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-skills-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const [name, script] of [
    ['missing', undefined],
    ['failing', '#!/bin/sh\necho "ffmpeg version 5.1.2"\nexit 1\n'],
    ['garbage', '#!/bin/sh\nhead -c 3000 /dev/urandom\n'],
  ] as const) {
    it(`${name}: empty lists and version 0.0.0 (the UI names it), the server keeps serving`, async () => {
      const binary = join(dir, `ffmpeg-${name}`);
      if (script !== undefined) {
        await writeFile(binary, script);
        await chmod(binary, 0o755);
      }
      const server = await startServer({ config: { ffmpeg: { binary } } });
      try {
        const skills = await ok<SkillsAnswer>(server, 'GET', '/skills/reload');
        assertUiShape(skills);
        assert.equal(skills.ffmpeg.version, '0.0.0');
        assert.ok(!uiAcceptsFfmpeg(skills.ffmpeg.version));
        assert.deepEqual(skills.codecs, { audio: [], video: [], subtitle: [] });
        assert.equal(await (await fetch(`${server.url}/ping`)).text(), 'pong');
      } finally {
        await server.close();
      }
    });
  }
});
