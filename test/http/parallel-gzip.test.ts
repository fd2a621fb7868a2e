import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { gzipInPieces } from '../../src/http/parallel-gzip.js';
import { startServer } from '../helpers/server.js';
import { lavfiProcess, ok } from '../process/support.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** Text like a process list (repetitive JSON) or random bytes, of about `size` bytes. */
function sample(random: () => number, size: number): Buffer {
  if (random() < 0.3) return Buffer.from(Array.from({ length: size }, () => Math.floor(random() * 256)));
  const words = ['{"id":"bench-', '","state":{"fps":', '4.98', ',"frame":', '"report":', 'ü"', '\\n', ']'];
  let text = '';
  while (text.length < size)
    text += words[Math.floor(random() * words.length)] + String(Math.floor(random() * 1000));
  return Buffer.from(text.slice(0, size));
}

describe('gzip in pieces', () => {
  it('is one gzip member that decodes to the input, for any size and number of pieces', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = seededRandom(seed);
      const sizes = [0, 1, 32 * 1024 - 1, 32 * 1024, 64 * 1024 + 1, Math.floor(random() * 600_000)];
      const input = sample(random, sizes[seed % sizes.length] as number);
      const pieces = 1 + Math.floor(random() * 5);
      const gzipped = await gzipInPieces(input, pieces);
      assert.ok(gunzipSync(gzipped).equals(input), `seed ${seed}: ${input.length} bytes in ${pieces} pieces`);
      // One deflate stream between the 10-byte header and the 8-byte trailer.
      assert.ok(inflateRawSync(gzipped.subarray(10, -8)).equals(input), `seed ${seed}: one stream`);
    }
  });

  it('encodes a large process list to the same bytes the client gets without gzip', async () => {
    const server = await startServer();
    try {
      // Six processes with large metadata: a list over the size from which it is sent in pieces
      // (without the state, whose runtime moves between the two requests).
      for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
        await ok(server, 'POST', '/process', lavfiProcess(id));
        await ok(server, 'PUT', `/process/${id}/metadata/big`, 'x'.repeat(50_000) + id);
      }
      const fetchList = (encoding: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> =>
        new Promise((resolve, reject) => {
          const url = new URL('/api/v3/process?filter=config,report,metadata', server.url);
          const sent = request(url, { headers: { 'accept-encoding': encoding } }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
          });
          sent.on('error', reject);
          sent.end();
        });
      const plain = await fetchList('identity');
      const gzipped = await fetchList('gzip, deflate');
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(gzipped.headers['content-encoding'], 'gzip');
      assert.match(String(gzipped.headers.vary), /accept-encoding/i);
      assert.ok(plain.body.length > 300_000);
      assert.ok(gunzipSync(gzipped.body).equals(plain.body));
    } finally {
      await server.close();
    }
  });
});
