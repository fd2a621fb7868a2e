import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { firstHlsSegment } from '../helpers/hls-viewer.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startS3Endpoint, type S3Endpoint } from '../helpers/s3-endpoint.js';
import { call, ok, waitFor } from './support.js';

/**
 * A real ffmpeg writes HLS to `{fs:media}` (docs/storage.md#s3-filesystems): through the server,
 * with the run's own write credential, into a real S3 server's bucket; viewers read it back
 * through the mountpoint, and the cleanup rules delete old segments from the bucket.
 */
describe('an encoder writing HLS into an S3 filesystem', () => {
  let s3: S3Endpoint;
  let server: TestServer;

  before(async () => {
    s3 = await startS3Endpoint();
    server = await startServer({
      config: {
        // The viewer here is on loopback, which is not counted by default.
        sessions: { ip_ignorelist: [] },
        storage: {
          s3: [
            {
              name: 'media',
              mountpoint: '/s3',
              auth: { enable: true, username: 'publisher', password: 's3-publisher-password' },
              endpoint: s3.endpoint,
              access_key_id: s3.accessKeyId,
              secret_access_key: s3.secretAccessKey,
              bucket: 'live-bucket',
              region: '',
              use_ssl: false,
            },
          ],
        },
      },
    });
  });
  after(async () => {
    await server?.close();
    await s3?.stop();
  });

  const segmentKeys = async (): Promise<string[]> => {
    const listing = await s3.direct.send(new ListObjectsV2Command({ Bucket: 'live-bucket' }));
    return (listing.Contents ?? []).map((item) => item.Key ?? '').sort();
  };

  it('writes segments and playlists with PUT, serves them to viewers, cleans up old segments, and purges on delete', async () => {
    await ok(server, 'POST', '/process', {
      id: 's3hls',
      input: [{ id: 'in', address: 'testsrc=size=64x48:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'out',
          address: '{fs:media}/s3cam.m3u8',
          options: [
            ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'hls'],
            ...['-hls_time', '1', '-hls_list_size', '3', '-method', 'PUT'],
            ...['-hls_segment_filename', '{fs:media}/s3cam%04d.ts'],
          ],
          cleanup: [
            { pattern: 'media:/s3cam*.ts', max_files: 3, max_file_age_seconds: 0, purge_on_delete: true },
            { pattern: 'media:/s3cam.m3u8', max_files: 0, max_file_age_seconds: 0, purge_on_delete: true },
          ],
        },
      ],
      options: ['-loglevel', 'info'],
      autostart: true,
    });

    const segment = await firstHlsSegment(server, 's3cam', 's3hls', 30_000, '/s3');
    assert.ok(segment.length > 1000, `a segment of ${segment.length} bytes`);
    assert.equal(segment[0], 0x47, 'an MPEG-TS segment (sync byte)');
    // The viewer is an HLS session like one of memfs.
    const active = (await (await fetch(`${server.url}/api/v3/session/active?collectors=hls`)).json()) as {
      hls: { local: string }[];
    };
    assert.deepEqual(
      active.hls.map((session) => session.local),
      ['/s3/s3cam.m3u8'],
    );

    // Seven segments written: the first ones are gone from the bucket, at most the newest few stay.
    await waitFor(
      async () => (await segmentKeys()).some((key) => key >= 's3cam0007.ts'),
      30_000,
      'segment 7 in the bucket',
    );
    await waitFor(
      async () => {
        const keys = await segmentKeys();
        const segments = keys.filter((key) => key.endsWith('.ts'));
        return !segments.includes('s3cam0000.ts') && segments.length <= 6 ? keys : undefined;
      },
      15_000,
      'the cleanup rule to delete old segments from the bucket',
    );
    // The playlist in the bucket lists consecutive segments: none was lost on the way.
    const playlist = await (await fetch(`${server.url}/api/v3/fs/media/s3cam.m3u8`)).text();
    const listed = playlist
      .split('\n')
      .filter((line) => line.endsWith('.ts'))
      .map((line) => Number(/(\d+)\.ts$/.exec(line)?.[1]));
    assert.ok(listed.length >= 2, playlist);
    listed.forEach(
      (number, index) => index > 0 && assert.equal(number, (listed[index - 1] ?? 0) + 1, playlist),
    );

    // The encoder's credential is its own: it cannot be used beyond its outputs' names.
    const state = await ok<{ command: string[] }>(server, 'GET', '/process/s3hls/state');
    assert.ok(!state.command.join(' ').includes('s3-publisher-password'));

    await ok(server, 'DELETE', '/process/s3hls');
    await waitFor(
      async () => ((await segmentKeys()).length === 0 ? true : undefined),
      15_000,
      'the purge on delete',
    ).catch(async (error: unknown) =>
      assert.fail(`${String(error)}; left: ${(await segmentKeys()).join(' ')}`),
    );
    const gone = await call(server, 'GET', '/fs/media');
    assert.deepEqual(gone.body, []);
  });
});
