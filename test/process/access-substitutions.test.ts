import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok, waitFor } from './support.js';

/**
 * Issue 24 item 2 over real HTTP with the real ffmpeg: no output name escapes the disk directory
 * through a name ffmpeg substitutes (`-var_stream_map` names for `%v`). With the sandbox off the
 * policy is the only layer, so every case runs there; with the real bubblewrap as well.
 */

const INPUT = { id: 'in', address: 'testsrc=size=32x24:rate=5', options: ['-f', 'lavfi', '-t', '1'] };
const HLS = ['-map', '0:v', '-c:v', 'mpeg2video', '-f', 'hls', '-hls_time', '1'];

function hlsProcess(id: string, address: string, options: string[]): Record<string, unknown> {
  return {
    id,
    input: [INPUT],
    output: [{ id: 'out', address, options: [...HLS, ...options] }],
    options: ['-loglevel', 'info'],
    reconnect: false,
    autostart: true,
  };
}

/** `{outside}` is the directory beside the disk directory, named from inside it. */
const ESCAPES: [string, string, string[]][] = [
  ['a name with ..', '{diskfs}/%v.m3u8', ['-var_stream_map', 'v:0,name:../outside/x']],
  ['the config file', '{diskfs}/%v', ['-var_stream_map', 'v:0,name:../config.json']],
  ['%V in capitals', '{diskfs}/%V.m3u8', ['-var_stream_map', 'v:0,name:../outside/caps']],
  ['a dot completing ..', '{diskfs}/%v./outside/dot.m3u8', ['-var_stream_map', 'v:0,name:.']],
  ['an empty name completing ..', '{diskfs}/.%v./outside/empty.m3u8', ['-var_stream_map', 'v:0,name:']],
  [
    'the segment file name',
    '{diskfs}/seg.m3u8',
    ['-var_stream_map', 'v:0,name:../outside/s', '-hls_segment_filename', '{diskfs}/%v_%d.ts'],
  ],
  ['a backslash', '{diskfs}/%v.m3u8', ['-var_stream_map', 'v:0,name:..\\outside']],
  ['the second variant', '{diskfs}/%v.m3u8', ['-var_stream_map', 'v:0,name:low v:0,name:../outside/two']],
];

for (const sandbox of ['off', 'on'] as const) {
  describe(`names ffmpeg substitutes into output names, ffmpeg.sandbox ${sandbox} (issue 24 item 2)`, () => {
    let server: TestServer;
    let outside: string;
    let configBefore: string;

    before(async () => {
      server = await startServer({ config: { ffmpeg: { sandbox } } });
      outside = join(server.dir, 'outside');
      await mkdir(outside);
      configBefore = await readFile(join(server.dir, 'config.json'), 'utf8');
    });
    after(async () => {
      await server.close();
    });

    it('refuses every var_stream_map name that would leave the disk directory, naming it', async () => {
      for (const [what, address, options] of ESCAPES) {
        const answer = await call<{ details: string[] }>(
          server,
          'POST',
          '/process',
          hlsProcess('escape', address, options),
        );
        assert.equal(answer.status, 400, `${what}: ${answer.text}`);
        assert.match(answer.body.details.join('\n'), /-var_stream_map\): var_stream_map name "/, what);
      }
      // A tee muxer slave's options are unescaped by ffmpeg before hls reads them.
      const teeSlave = '[f=hls:var_stream_map=v\\:0\\,name\\:../outside/tee]{diskfs}/%v.m3u8';
      const tee = await call<{ details: string[] }>(server, 'POST', '/process', {
        ...hlsProcess('escape-tee', teeSlave, []),
        output: [
          { id: 'out', address: teeSlave, options: ['-map', '0:v', '-c:v', 'mpeg2video', '-f', 'tee'] },
        ],
      });
      assert.equal(tee.status, 400, tee.text);
      assert.match(tee.body.details.join('\n'), /var_stream_map name "\.\.\/outside\/tee"/);
      assert.deepEqual(await ok<unknown[]>(server, 'GET', '/process'), []);
      assert.deepEqual(await readdir(outside), [], 'nothing was written outside');
      assert.equal(await readFile(join(server.dir, 'config.json'), 'utf8'), configBefore);
    });

    it('runs plain names, indexes and strftime segment names inside the disk directory', async () => {
      await ok(
        server,
        'POST',
        '/process',
        hlsProcess('named', '{diskfs}/%v.m3u8', [
          '-var_stream_map',
          'v:0,name:low',
          '-hls_segment_filename',
          '{diskfs}/%v_%03d.ts',
        ]),
      );
      await ok(
        server,
        'POST',
        '/process',
        hlsProcess('timed', '{diskfs}/timed.m3u8', [
          '-strftime',
          '1',
          '-hls_segment_filename',
          '{diskfs}/timed-%Y%m%d-%s.ts',
        ]),
      );
      const data = join(server.dir, 'data');
      await waitFor(
        async () => {
          const files = await readdir(data);
          return (
            existsSync(join(data, 'low.m3u8')) &&
            files.some((file) => /^low_\d{3}\.ts$/.test(file)) &&
            files.some((file) => /^timed-\d{8}-\d+\.ts$/.test(file))
          );
        },
        20_000,
        'the named and the timed outputs',
      );
      assert.deepEqual(await readdir(outside), []);
    });
  });
}
