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
      // The process list uses level 3; any level must give one valid member.
      const level = seed % 3 === 0 ? undefined : 1 + Math.floor(random() * 9);
      const gzipped = await gzipInPieces(input, pieces, level);
      assert.ok(
        gunzipSync(gzipped).equals(input),
        `seed ${seed}: ${input.length} bytes in ${pieces} pieces at level ${level}`,
      );
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
      const fetchList = (
        encoding: string,
        filter = 'config,report,metadata',
      ): Promise<{ headers: Record<string, unknown>; body: Buffer }> =>
        new Promise((resolve, reject) => {
          const url = new URL(`/api/v3/process?filter=${filter}`, server.url);
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

      // The list is built in a buffer kept between requests (ScratchBuffer); requests at once get
      // their own, and a shorter list after a longer one carries nothing of it.
      const random = seededRandom(7);
      const filters = ['config,report,metadata', 'report,metadata', 'metadata', 'config,metadata'];
      let gzippedAnswers = 0;
      for (let round = 0; round < 8; round++) {
        const id = ['a', 'b', 'c', 'd', 'e', 'f'][Math.floor(random() * 6)] as string;
        const length = 10_000 + Math.floor(random() * 20_000);
        await ok(server, 'PUT', `/process/${id}/metadata/big`, 'ü'.repeat(length) + id + String(round));
        const chosen = filters.filter(() => random() < 0.7);
        const expected = await Promise.all(chosen.map((filter) => fetchList('identity', filter)));
        const answers = await Promise.all(chosen.map((filter) => fetchList('gzip', filter)));
        answers.forEach((answer, index) => {
          const encoded = answer.headers['content-encoding'] === 'gzip';
          if (encoded) gzippedAnswers++;
          const body = encoded ? gunzipSync(answer.body) : answer.body;
          assert.ok(
            body.equals((expected[index] as { body: Buffer }).body),
            `round ${round} ${chosen[index]}`,
          );
        });
      }
      assert.ok(gzippedAnswers > 8, `${gzippedAnswers} answers took the gzip path`);
    } finally {
      await server.close();
    }
  });
});
