import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RtmpTestClient } from '../helpers/rtmp-client.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, isAlive, lavfiProcess, ok, waitForState } from '../process/support.js';

/**
 * What the Restreamer UI's Save + Restart does (PUT /api/v3/config, GET /api/v3/config/reload),
 * against a server with a running encoder: the changed keys take effect, the encoder keeps its pid.
 */
describe('config reload: settings take effect while processes keep running', () => {
  let server: TestServer;
  let pid: number;
  before(async () => {
    server = await startServer({
      config: { rtmp: { enable: true, address: '127.0.0.1:0', token: 'old-token' } },
    });
    await ok(server, 'POST', '/process', lavfiProcess('keeps-running', { autostart: true }));
    pid = (await waitForState(server, 'keeps-running', 'running', 20_000, 5)).pid;
  });
  after(() => server.close());

  async function corsFor(origin: string): Promise<string | null> {
    const answer = await fetch(`${server.url}/ping`, { headers: { origin } });
    await answer.arrayBuffer();
    return answer.headers.get('access-control-allow-origin');
  }

  it('applies CORS origins and the RTMP token; the encoder keeps its pid', async () => {
    assert.equal(await corsFor('https://other.example'), '*');
    const rtmpPort = server.app.ingest.rtmp?.ports()[0] ?? 0;
    await ok(server, 'PUT', '/config', {
      version: 3,
      storage: { cors: { origins: ['https://studio.example'] } },
      rtmp: { token: 'new-token' },
    });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');

    assert.equal(await corsFor('https://other.example'), null);
    assert.equal(await corsFor('https://studio.example'), 'https://studio.example');
    const oldToken = await RtmpTestClient.open(rtmpPort);
    assert.equal(await oldToken.publish('live', 'a?token=old-token'), 'NetStream.Publish.BadName');
    oldToken.close();
    const newToken = await RtmpTestClient.open(rtmpPort);
    assert.equal(await newToken.publish('live', 'a?token=new-token'), 'NetStream.Publish.Start');
    newToken.close();
    const state = await waitForState(server, 'keeps-running', 'running');
    assert.equal(state.pid, pid);
    assert.ok(isAlive(pid));
  });

  it('rebuilds the router from the file; a reload it cannot apply changes nothing and says why', async () => {
    const ui = join(server.dir, 'ui-build');
    await mkdir(ui);
    await writeFile(join(ui, 'index.html'), 'reloaded ui');
    const file = join(server.dir, 'config.json');
    const json = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...json, router: { ui_path: ui } }));
    assert.equal((await fetch(`${server.url}/ui/`)).status, 404);
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal(await (await fetch(`${server.url}/ui/`)).text(), 'reloaded ui');

    await writeFile(
      file,
      JSON.stringify({
        ...json,
        router: { ui_path: join(server.dir, 'missing') },
        storage: { cors: { origins: ['*'] } },
      }),
    );
    const refused = await call<{ message: string; details: string[] }>(server, 'GET', '/config/reload');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, 'Config not applied');
    assert.match(refused.body.details.join('\n'), /^router\.ui_path: ".*missing" cannot be read \(ENOENT\)/);
    // Neither the router nor the CORS origins of that file took effect.
    assert.equal(await (await fetch(`${server.url}/ui/`)).text(), 'reloaded ui');
    assert.equal(await corsFor('https://other.example'), null);
    assert.equal((await waitForState(server, 'keeps-running', 'running')).pid, pid);
  });
});
