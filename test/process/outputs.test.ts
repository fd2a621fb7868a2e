import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { getReport, getState, lavfiProcess, ok, sleep, waitFor, waitForState } from './support.js';

/** HLS options for short segments of a 10 fps picture: a key frame every 5 frames, 1 s segments. */
const HLS = ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5', '-f', 'hls', '-hls_time', '1'];

async function segments(dir: string, prefix: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.startsWith(prefix) && name.endsWith('.ts')).sort();
}

describe('outputs and cleanup rules', () => {
  let server: TestServer;
  let data: string;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { password: 'hidden-pw' } } } } });
    data = join(server.dir, 'data');
  });
  after(() => server.close());

  it('writes HLS to disk and keeps at most max_files segments', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('hlsdisk', {
        output: [
          {
            id: 'hls',
            address: '{diskfs}/{processid}.m3u8',
            // ffmpeg itself keeps every segment (list size 0): only the cleanup rule deletes.
            options: [...HLS, '-hls_list_size', '0', '-hls_segment_filename', '{diskfs}/{processid}_%04d.ts'],
            cleanup: [
              {
                pattern: 'disk:/{processid}_*.ts',
                max_files: 3,
                max_file_age_seconds: 0,
                purge_on_delete: true,
              },
            ],
          },
        ],
        autostart: true,
      }),
    );
    await waitFor(
      async () => (await segments(data, 'hlsdisk_')).some((name) => name >= 'hlsdisk_0006.ts'),
      20_000,
      'seven segments',
    );
    // ffmpeg may open a new segment right after a cleanup tick: allow the tick to catch up.
    const kept = await waitFor(
      async () => {
        const names = await segments(data, 'hlsdisk_');
        return names.length <= 3 ? names : undefined;
      },
      3000,
      'at most 3 segments',
    );
    assert.ok(kept.length >= 1);
    assert.ok(!kept.includes('hlsdisk_0000.ts'), 'the oldest segments are gone');
    assert.ok((await readdir(data)).includes('hlsdisk.m3u8'), 'files outside the rule are kept');
    const state = await getState(server, 'hlsdisk');
    assert.ok(state.progress.frame > 0);
    await ok(server, 'DELETE', '/process/hlsdisk');
    assert.deepEqual(await segments(data, 'hlsdisk_'), [], 'purge_on_delete removed the segments');
    assert.ok(
      (await readdir(data)).includes('hlsdisk.m3u8'),
      'the playlist is not matched by the purge rule',
    );
  });

  it('purges purge_on_delete files when the process is replaced by an update', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('replaced', {
        output: [
          {
            id: 'hls',
            address: '{diskfs}/{processid}.m3u8',
            options: [...HLS, '-hls_list_size', '0'],
            cleanup: [{ pattern: 'disk:/{processid}*.ts', purge_on_delete: true }],
          },
        ],
        autostart: true,
      }),
    );
    await waitFor(async () => (await segments(data, 'replaced')).length >= 2, 20_000, 'two segments');
    // Stopped first, so that no new run writes segments while the test looks.
    await ok(server, 'PUT', '/process/replaced/command', { command: 'stop' });
    assert.ok((await segments(data, 'replaced')).length >= 2, 'a stop does not purge');
    await ok(server, 'PUT', '/process/replaced', { reference: 'new' });
    assert.deepEqual(await segments(data, 'replaced'), [], 'the update purged the segments');
    assert.ok((await readdir(data)).includes('replaced.m3u8'), 'files outside the rule are kept');
    await ok(server, 'DELETE', '/process/replaced');
  });

  it("shows ffmpeg's reason when a file output exists at a restart, and runs with -y", async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('recorder', {
        output: [{ id: 'rec', address: '{diskfs}/rec.ts', options: ['-f', 'mpegts'] }],
        autostart: true,
      }),
    );
    await waitForState(server, 'recorder', 'running', 15_000, 1);
    await ok(server, 'PUT', '/process/recorder/command', { command: 'stop' });
    assert.ok((await readdir(data)).includes('rec.ts'));
    // Without -y ffmpeg refuses to overwrite the recording of the first run.
    await ok(server, 'PUT', '/process/recorder/command', { command: 'start' });
    const failed = await waitForState(server, 'recorder', 'failed');
    assert.match(failed.last_logline, /^File '.*\/rec\.ts' already exists\. Exiting\.$/);
    const report = await getReport(server, 'recorder');
    assert.ok(report.log.some(([, line]) => line === 'streamcore: exited with code 1'));
    // The documented way: -y in the global options (overwrites the file, as the user asked).
    await ok(server, 'PUT', '/process/recorder', { options: ['-loglevel', 'info', '-y'] });
    await waitForState(server, 'recorder', 'running', 15_000, 1);
    await ok(server, 'DELETE', '/process/recorder');
  });

  it('deletes files older than max_file_age_seconds', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('hlsage', {
        output: [
          {
            id: 'hls',
            address: '{diskfs}/{processid}.m3u8',
            options: [...HLS, '-hls_list_size', '0'],
            cleanup: [
              {
                pattern: 'diskfs:/{processid}*.ts',
                max_files: 0,
                max_file_age_seconds: 2,
                purge_on_delete: false,
              },
            ],
          },
        ],
        autostart: true,
      }),
    );
    await waitFor(
      async () => (await segments(data, 'hlsage')).includes('hlsage5.ts'),
      20_000,
      'six segments',
    );
    await sleep(1500);
    const names = await segments(data, 'hlsage');
    assert.ok(!names.includes('hlsage0.ts') && !names.includes('hlsage1.ts'), names.join(', '));
    await ok(server, 'DELETE', '/process/hlsage');
    assert.ok((await segments(data, 'hlsage')).length > 0, 'without purge_on_delete the files stay');
  });

  it('writes HLS into memfs over loopback, counts its bytes, and purges it on delete', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('hlsmem', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/{processid}.m3u8',
            options: [...HLS, '-hls_list_size', '3', '-hls_flags', 'delete_segments', '-method', 'PUT'],
            cleanup: [
              {
                pattern: 'memfs:/{processid}**',
                max_files: 0,
                max_file_age_seconds: 0,
                purge_on_delete: true,
              },
            ],
          },
        ],
        autostart: true,
      }),
    );
    const playlist = await waitFor(
      async () => {
        const response = await fetch(`${server.url}/memfs/hlsmem.m3u8`);
        return response.status === 200 ? response.text() : undefined;
      },
      20_000,
      'the playlist in memfs',
    );
    assert.match(playlist, /#EXTM3U/);
    const state = await waitFor(
      async () => {
        const current = await getState(server, 'hlsmem');
        return current.progress.size_kb > 0 && (current.progress.outputs[0]?.size_kb as number) > 0
          ? current
          : undefined;
      },
      10_000,
      'bytes written through the server',
    );
    const output = state.progress.outputs[0] as Record<string, unknown>;
    assert.equal(output.address, `${server.url.replace('://', '://***:***@')}/memfs/hlsmem.m3u8`);
    assert.ok(!JSON.stringify(state).includes('hidden-pw'));
    const files = await ok<{ name: string }[]>(server, 'GET', '/fs/mem');
    assert.ok(files.some((file) => file.name.startsWith('/hlsmem')));
    await ok(server, 'DELETE', '/process/hlsmem');
    const after = await ok<{ name: string }[]>(server, 'GET', '/fs/mem');
    assert.deepEqual(
      after.filter((file) => file.name.startsWith('/hlsmem')),
      [],
    );
  });

  it('reads another process output through an input reference', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('source', {
        output: [{ id: 'hls', address: '{memfs}/source.m3u8', options: [...HLS, '-method', 'PUT'] }],
        autostart: true,
      }),
    );
    await waitFor(
      async () => (await fetch(`${server.url}/memfs/source.m3u8`)).status === 200,
      20_000,
      'the source playlist',
    );
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('reader', { input: [{ id: 'in', address: '#source:output=hls' }], autostart: true }),
    );
    const state = await waitForState(server, 'reader', 'running', 20_000, 1);
    // Reading memfs needs no credentials, so a reader is given none.
    assert.ok(state.command.includes(`${server.url}/memfs/source.m3u8`));
    await ok(server, 'DELETE', '/process/reader');
    await ok(server, 'DELETE', '/process/source');
  });
});
