import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { atoi, splitUrl } from '../../../src/process/access/url-split.js';

/**
 * The host and port ffmpeg connects to for each address (libavformat `av_url_split`); the cases
 * where a WHATWG URL parser would answer differently come first.
 */
describe('splitting an address as ffmpeg does', () => {
  const cases: [string, string, number, string][] = [
    ['http://evil.example\\@127.0.0.1:8080/metrics', '127.0.0.1', 8080, '/metrics'],
    ['rtmp://a\\@127.0.0.1:8080', '127.0.0.1', 8080, ''],
    ['tcp://evil.example\\@[::1]:8080', '::1', 8080, ''],
    ['http://a@b@127.0.0.1:8080/x', '127.0.0.1', 8080, '/x'],
    ['http://[127.0.0.1]:8080/x', '127.0.0.1', 8080, '/x'],
    ['http:127.0.0.1:8080/metrics', '127.0.0.1', 8080, '/metrics'],
    ['http:/127.0.0.1:8080/metrics', '127.0.0.1', 8080, '/metrics'],
    ['http://127.0.0.1:4294975376/metrics', '127.0.0.1', 8080, '/metrics'],
    ['http://127.0.0.1:+8080x/metrics', '127.0.0.1', 8080, '/metrics'],
    ['http://127.0.0.1:-1/', '127.0.0.1', -1, '/'],
    ['http://user/x@127.0.0.1:8080/', 'user', -1, '/x@127.0.0.1:8080/'],
    ['http://evil.example?@127.0.0.1:8080/', 'evil.example', -1, '?@127.0.0.1:8080/'],
    ['http://evil.example#@127.0.0.1:8080/', 'evil.example', -1, '#@127.0.0.1:8080/'],
    ['srt://:9000?mode=listener', '', 9000, '?mode=listener'],
    ['http://[::1]x:8080/', '::1', -1, '/'],
  ];
  for (const [address, host, port, path] of cases) {
    it(address, () => {
      const split = splitUrl(address);
      assert.deepEqual({ host: split?.host, port: split?.port, path: split?.path }, { host, port, path });
    });
  }

  it('reads ports with C atoi on a 64-bit long', () => {
    assert.equal(atoi('8080'), 8080);
    assert.equal(atoi(' \t+8080/x'), 8080);
    assert.equal(atoi('08080'), 8080);
    assert.equal(atoi('x8080'), 0);
    assert.equal(atoi(''), 0);
    assert.equal(atoi('-5'), -5);
    assert.equal(atoi(String(2 ** 32 + 8080)), 8080);
    assert.equal(atoi('99999999999999999999999'), -1);
  });

  it('leaves a path without a colon alone', () => {
    assert.equal(splitUrl('/srv/data/x.ts'), undefined);
  });
});
