import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, waitFor } from './support.js';

/** A memfs password with a quote: ffmpeg prints it inside '…', where the URL pattern stops. */
const PASSWORD = "pw'4-streamcore-audit";
const BASIC = Buffer.from(`admin:${PASSWORD}`).toString('base64');
const FORMS = [PASSWORD, encodeURIComponent(PASSWORD), BASIC, 'streamcore-audit'];

function assertNoSecret(text: string, where: string): void {
  for (const form of FORMS)
    assert.ok(!text.includes(form), `${where} shows "${form}": ${text.slice(0, 2000)}`);
}

describe('credentials of memfs outputs at -loglevel debug', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        storage: { memory: { auth: { enable: true, username: 'admin', password: PASSWORD } } },
        metrics: { enable: true, interval_sec: 1 },
      },
    });
  });
  after(() => server.close());

  it('keeps the password and its basic-auth header out of report, state and restream_io labels', async () => {
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('leaky', {
        output: [
          {
            id: 'hls',
            address: '{memfs}/{processid}.m3u8',
            options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '5', '-f', 'hls', '-hls_time', '1'],
          },
        ],
        options: ['-loglevel', 'debug'],
        autostart: true,
      }),
    );
    // ffmpeg logs the headers of every PUT it retries with basic auth after memfs's 401.
    const report = await waitFor(
      async () => {
        const answer = await call(server, 'GET', '/process/leaky/report');
        return answer.text.includes('Authorization:') ? answer.text : undefined;
      },
      20_000,
      'an Authorization header line in the report',
    );
    assert.match(report, /"Authorization: Basic \*\*\*"/);
    assertNoSecret(report, '/report');
    await waitFor(
      async () => (await fetch(`${server.url}/memfs/leaky.m3u8`)).status === 200,
      10_000,
      'the playlist in memfs (the PUTs were authenticated)',
    );

    const state = await call(server, 'GET', '/process/leaky/state');
    assertNoSecret(state.text, '/state');
    assert.ok(state.text.includes(`${server.url.replace('://', '://***:***@')}/memfs/leaky.m3u8`));
    assertNoSecret((await call(server, 'GET', '/process/leaky')).text, 'the process object');

    const series = await waitFor(
      async () => {
        const answer = await ok<{ metrics: { labels: Record<string, string> }[] }>(
          server,
          'POST',
          '/metrics',
          {
            metrics: [{ name: 'restream_io', labels: { processid: '^leaky$', type: '^output$' } }],
          },
        );
        return answer.metrics.length > 0 ? answer.metrics : undefined;
      },
      10_000,
      'restream_io series of the output',
    );
    for (const { labels } of series) {
      assert.equal(labels.address, `${server.url.replace('://', '://***:***@')}/memfs/leaky.m3u8`);
      assertNoSecret(JSON.stringify(labels), 'a restream_io label');
    }
    await ok(server, 'DELETE', '/process/leaky');
  });
});
