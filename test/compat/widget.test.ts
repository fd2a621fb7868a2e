import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { firstHlsSegment } from '../helpers/hls-viewer.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../process/support.js';

const PASSWORD = 'widget-test-password';
const CHANNEL = '0b7a34c4-9f0e-4d7e-8a51-1f6f3c2b9d10';
const ID = `restreamer-ui:ingest:${CHANNEL}`;

interface Widget {
  current_sessions: number;
  total_sessions: number;
  uptime: number;
}

/**
 * The Restreamer UI's player site (a public page the server serves from its disk filesystem)
 * polls `api/v3/widget/process/<channel process id>` every 2 s without a token and writes
 * `current_sessions`, `total_sessions` and `uptime` (as d:hh:mm:ss) into the page. Without the
 * route, the page showed "undefined" viewers and "NaN:NaN:NaN:NaN" uptime (the walk-through of
 * docs/restreamer-ui.md).
 */
describe('GET /api/v3/widget/process/:id, as the player site calls it', () => {
  let server: TestServer;
  let token = '';

  const widget = async (id: string): Promise<Response> => fetch(`${server.url}/api/v3/widget/process/${id}`);
  const api = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(`${server.url}/api/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** The checks the page's script applies: numbers it can print and do arithmetic on. */
  const figures = async (): Promise<Widget> => {
    const response = await widget(ID);
    assert.equal(response.status, 200);
    const body = (await response.json()) as Widget;
    assert.deepEqual(Object.keys(body).sort(), ['current_sessions', 'total_sessions', 'uptime']);
    for (const value of Object.values(body))
      assert.ok(Number.isInteger(value) && value >= 0, JSON.stringify(body));
    return body;
  };

  before(async () => {
    server = await startServer({
      config: {
        api: { auth: { enable: true, username: 'admin', password: PASSWORD } },
        // Loopback viewers count here; the default list ignores them.
        sessions: { ip_ignorelist: [], session_timeout_sec: 2 },
      },
    });
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    token = ((await login.json()) as { access_token: string }).access_token;
    const created = await api('POST', '/process', {
      id: ID,
      reference: CHANNEL,
      input: [{ id: 'in', address: 'testsrc=size=64x48:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          id: 'hls',
          address: `{memfs}/${CHANNEL}.m3u8`,
          options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'hls', '-hls_time', '1'],
        },
      ],
      options: ['-loglevel', 'info'],
      autostart: true,
    });
    assert.equal(created.status, 200, await created.text());
  });
  after(() => server.close());

  it('answers without a token while the rest of /api/v3 stays guarded', async () => {
    assert.equal((await widget(ID)).status, 200);
    assert.equal((await fetch(`${server.url}/api/v3/process/${ID}`)).status, 401);
    assert.equal((await fetch(`${server.url}/api/v3/process/${ID}/state`)).status, 401);
  });

  it('an unknown process is a 404 envelope, as the reference', async () => {
    const response = await widget('restreamer-ui:ingest:nothing');
    assert.equal(response.status, 404);
    const body = (await response.json()) as { code: number; message: string; details: string[] };
    assert.equal(body.code, 404);
    assert.equal(body.message, 'Unknown process ID');
    assert.ok(Array.isArray(body.details));
  });

  it('counts the uptime while running and the HLS viewers of the channel', async () => {
    await waitFor(async () => (await figures()).uptime >= 1, 20_000, 'an uptime of 1 s');
    await firstHlsSegment(server, CHANNEL, ID);
    const watching = await waitFor(
      async () => {
        const now = await figures();
        return now.current_sessions >= 1 ? now : undefined;
      },
      10_000,
      'a current session',
    );
    assert.equal(watching.current_sessions, 1);
    // The viewer left: its session closes after the timeout and is counted in the total.
    const left = await waitFor(
      async () => {
        const now = await figures();
        return now.current_sessions === 0 && now.total_sessions >= 1 ? now : undefined;
      },
      15_000,
      'the session closed into the total',
    );
    assert.equal(left.total_sessions, 1);
  });

  it('reports uptime 0 once the process is stopped', async () => {
    const stopped = await api('PUT', `/process/${ID}/command`, { command: 'stop' });
    assert.equal(stopped.status, 200, await stopped.text());
    await waitFor(async () => (await figures()).uptime === 0, 15_000, 'uptime 0');
  });
});
