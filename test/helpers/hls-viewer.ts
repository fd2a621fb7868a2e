import assert from 'node:assert/strict';
import { ok } from '../process/support.js';
import type { TestServer } from './server.js';

/**
 * Plays `<mount>/<name>.m3u8` (default `/memfs`) as a viewer would (the first answer is a master playlist naming the
 * viewer's session) until it lists a segment, and returns that segment's bytes. Fails with the
 * writing process's report when none comes within `timeoutMs`.
 */
export async function firstHlsSegment(
  server: TestServer,
  name: string,
  writerId: string,
  timeoutMs = 30_000,
  mount = '/memfs',
): Promise<Buffer> {
  let segment = '';
  let last = '';
  const until = Date.now() + timeoutMs;
  while (segment === '' && Date.now() < until) {
    let response = await fetch(`${server.url}${mount}/${name}.m3u8`);
    let text = await response.text();
    const variant = text.split('\n').find((line) => line.startsWith(`${name}.m3u8?session=`));
    if (variant !== undefined) {
      response = await fetch(`${server.url}${mount}/${variant}`);
      text = await response.text();
    }
    const isSegment = new RegExp(`^${name}\\d+\\.ts`);
    segment = response.status === 200 ? (text.split('\n').find((line) => isSegment.test(line)) ?? '') : '';
    last = `${response.status} ${text}`;
    if (segment === '') await new Promise((resolve) => setTimeout(resolve, 300));
  }
  if (segment === '') {
    const report = await ok(server, 'GET', `/process/${writerId}/report`);
    assert.fail(
      `${writerId} wrote no playlist with segments: ${last} ${JSON.stringify(report).slice(0, 3000)}`,
    );
  }
  return Buffer.from(await (await fetch(`${server.url}${mount}/${segment}`)).arrayBuffer());
}

/** A process copying its input into memfs HLS as `<name>.m3u8` (1 s segments, 4 listed). */
export function hlsRestreamProcess(id: string, input: string, name: string): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: input, options: [] }],
    output: [
      {
        id: 'hls',
        address: `{memfs}/${name}.m3u8`,
        options: [
          '-c',
          'copy',
          '-f',
          'hls',
          '-hls_time',
          '1',
          '-hls_list_size',
          '4',
          '-hls_flags',
          'delete_segments',
        ],
      },
    ],
    options: ['-loglevel', 'info'],
    autostart: true,
  };
}

/**
 * A process publishing a live test picture (160×120, 25 fps, H.264 with a keyframe a second) to
 * `address` in `format` (`flv` for RTMP, `mpegts` for SRT), started at once.
 */
export function livePublisherProcess(id: string, address: string, format: string): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=25', options: ['-re', '-f', 'lavfi'] }],
    output: [
      {
        id: 'out',
        address,
        options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-f', format],
      },
    ],
    options: ['-loglevel', 'info'],
    autostart: true,
  };
}
