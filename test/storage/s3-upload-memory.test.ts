import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { startMain } from '../helpers/main-process.js';
import { startS3Endpoint, type S3Endpoint } from '../helpers/s3-endpoint.js';
import { rssBytes, samplePeakRss, streamedPut } from './upload-client.js';

// test-alone: measures the server RSS during a 1 GiB upload; other suites' load only slows it down.

const MIB = 1024 * 1024;
/**
 * How far above its idle RSS the server may go while it streams an upload into S3. Live at once:
 * the first part read to decide between one request and a multipart upload, two parts in flight and
 * one filling (8 MiB each), and the SDK's buffers around them. V8 gives a dead part's memory back
 * only at its next collection, which it brings forward after some tens of MiB of such memory, so
 * the measured rise is 65–96 MiB whatever the size (160 MiB, 400 MiB and 1 GiB measured on
 * 28 Nov 2026); a body held in memory would add the whole gigabyte.
 */
const RSS_HEADROOM = 128 * MIB;
/** The size; about 25 s at what moto (Python) stores per second on the shared 2-core machine. */
const UPLOAD_BYTES = 1024 * MIB;

describe(
  'uploads into S3 are streamed as multipart uploads, not held in memory',
  { timeout: 180_000 },
  () => {
    let s3: S3Endpoint;
    let dir: string;
    let url: string;
    let pid: number;
    let stopServer: () => Promise<unknown>;
    const auth = { authorization: `Basic ${Buffer.from('writer:s3-upload-password').toString('base64')}` };

    before(async () => {
      s3 = await startS3Endpoint();
      dir = await mkdtemp(join(tmpdir(), 'streamcore-s3-upload-'));
      const server = startMain(
        {
          CORE_ADDRESS: '127.0.0.1:0',
          CORE_DB_DIR: join(dir, 'db'),
          CORE_STORAGE_DISK_DIR: join(dir, 'data'),
          CORE_STORAGE_S3:
            `http://${s3.accessKeyId}:${s3.secretAccessKey}@us-east-1.${s3.endpoint}/uploads` +
            '?name=records&mount=/records&username=writer&password=s3-upload-password',
          // As `npm start` runs it: a small young generation frees the socket's read buffers early.
          NODE_OPTIONS: '--max-semi-space-size=1',
        },
        dir,
      );
      stopServer = async () => {
        server.child.kill('SIGTERM');
        return server.exited;
      };
      url = await server.listening;
      pid = server.child.pid ?? 0;
    });
    after(async () => {
      await stopServer?.();
      await s3?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('stores 1 GiB sent chunked through the mountpoint with RSS within 128 MiB of idle', async () => {
      // One small upload first, so lazily loaded code paths are not counted as the large one's.
      await fetch(`${url}/records/warm.txt`, { method: 'PUT', headers: auth, body: 'warm' });
      const idle = rssBytes(pid);
      const sampler = samplePeakRss(pid);
      const answer = await streamedPut(`${url}/records/big/recording.ts`, {
        totalBytes: UPLOAD_BYTES,
        headers: auth,
        declare: false,
      });
      const peak = sampler.stop();
      assert.equal(answer.status, 201, answer.body);
      const head = await s3.direct.send(
        new HeadObjectCommand({ Bucket: 'uploads', Key: 'big/recording.ts' }),
      );
      assert.equal(head.ContentLength, UPLOAD_BYTES);
      console.log(`s3 upload ${mb(UPLOAD_BYTES)} MiB chunked: idle ${mb(idle)} MiB, peak ${mb(peak)} MiB`);
      assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);

      // Read back by ranges: the end of the object, streamed from the bucket (too large to cache).
      const tail = await fetch(`${url}/records/big/recording.ts`, {
        headers: { range: `bytes=${UPLOAD_BYTES - 4}-${UPLOAD_BYTES - 1}` },
      });
      assert.equal(tail.status, 206);
      assert.equal(
        tail.headers.get('content-range'),
        `bytes ${UPLOAD_BYTES - 4}-${UPLOAD_BYTES - 1}/${UPLOAD_BYTES}`,
      );
      assert.equal(await tail.text(), 'aaaa');
    });
  },
);

function mb(bytes: number): string {
  return (bytes / MIB).toFixed(0);
}
