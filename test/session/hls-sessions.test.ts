import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DeepPartial } from '../helpers/server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { Config } from '../../src/config/index.js';
import { rawRequest, type RawResponse } from '../storage/raw-request.js';

const VIEWER = '127.0.0.2';
const PLAYLIST = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:2
#EXT-X-MEDIA-SEQUENCE:0
#EXTINF:2.000000,
live0.ts
#EXTINF:2.000000,
live1.ts
`;
const SEGMENT_BYTES = 50_000;

interface SessionDto {
  id: string;
  local: string;
  remote: string;
  reference: string;
  bytes_rx: number;
  bytes_tx: number;
}
interface Summary {
  active: { list: SessionDto[]; sessions: number; max_sessions: number };
  summary: {
    sessions: number;
    traffic_tx_bytes: number;
    remote: Record<string, { sessions: number; local: Record<string, { sessions: number }> }>;
    reference: Record<string, { sessions: number }>;
  };
}

async function startWithStream(config: DeepPartial<Config> = {}, dir?: string): Promise<TestServer> {
  const server = await startServer({
    dir,
    config: {
      ...config,
      storage: { memory: { auth: { enable: false } } },
      sessions: { session_timeout_sec: 2, ...config.sessions },
    },
  });
  const put = (path: string, body: string | Buffer): Promise<Response> =>
    fetch(`${server.url}/memfs${path}`, { method: 'PUT', body });
  await put('/live0.ts', Buffer.alloc(SEGMENT_BYTES, 1));
  await put('/live1.ts', Buffer.alloc(SEGMENT_BYTES, 2));
  await put('/live.m3u8', PLAYLIST);
  return server;
}

const view = (server: TestServer, path: string, localAddress = VIEWER): Promise<RawResponse> =>
  rawRequest(server.url, path, { localAddress });

async function active(server: TestServer, collector = 'hls'): Promise<SessionDto[]> {
  const response = await fetch(`${server.url}/api/v3/session/active?collectors=${collector}`);
  return ((await response.json()) as Record<string, SessionDto[]>)[collector] ?? [];
}

async function summary(server: TestServer, collector = 'hls'): Promise<Summary> {
  const response = await fetch(`${server.url}/api/v3/session?collectors=${collector}`);
  return ((await response.json()) as Record<string, Summary>)[collector] as Summary;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function sessionIdOf(master: string): string {
  const match = /^live\.m3u8\?session=([A-Za-z0-9_-]+)$/m.exec(master);
  assert.ok(match, `hand-off master: ${master}`);
  return match[1] as string;
}

describe('HLS viewer sessions', () => {
  let server: TestServer;
  before(async () => {
    server = await startWithStream();
  });
  after(() => server.close());

  it('hands a new viewer a master playlist naming a new session, and counts nothing as active yet', async () => {
    const response = await view(server, '/memfs/live.m3u8');
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-type'], 'application/vnd.apple.mpegurl');
    const master = response.body.toString();
    assert.match(master, /^#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=(\d+)\n/);
    // Two 2-second segments of 50 000 bytes: 200 000 bit/s.
    assert.match(master, /BANDWIDTH=200000\n/);
    sessionIdOf(master);
    assert.deepEqual(await active(server), []);
  });

  it('rewrites the media playlist for the session, activates it on the first segment, and counts its bytes', async () => {
    const id = sessionIdOf((await view(server, '/memfs/live.m3u8')).body.toString());
    const media = await view(server, `/memfs/live.m3u8?session=${id}`);
    assert.equal(media.status, 200);
    assert.equal(media.body.toString(), PLAYLIST.replace(/^(live\d\.ts)$/gm, `$1?session=${id}`));
    assert.equal((await active(server)).length, 0, 'a playlist alone does not activate');
    const segment = await view(server, `/memfs/live0.ts?session=${id}`);
    assert.equal(segment.status, 200);
    assert.equal(segment.body.length, SEGMENT_BYTES);
    const session = await until('the session to count the segment', async () => {
      const found = (await active(server)).find((s) => s.id === id);
      return found !== undefined && found.bytes_tx > SEGMENT_BYTES ? found : undefined;
    });
    assert.equal(session.remote, VIEWER);
    assert.equal(session.local, '/memfs/live.m3u8');
    assert.equal(session.reference, 'live');
    assert.ok(session.bytes_rx > 0, 'request headers count as received bytes');
    // Master, media playlist and segment, each with its response headers.
    assert.ok(session.bytes_tx < SEGMENT_BYTES + media.body.length + 2000, String(session.bytes_tx));
  });

  it('refuses a malformed session id with 403', async () => {
    for (const path of [
      '/memfs/live.m3u8?session=bad%20id',
      '/memfs/live0.ts?session=x',
      '/memfs/live0.ts?session=',
    ]) {
      const response = await view(server, path);
      assert.equal(response.status, 403, path);
      const body = JSON.parse(response.body.toString()) as { code: number; details: string[] };
      assert.equal(body.code, 403);
      assert.equal(body.details.length, 1);
    }
  });

  it('refuses a malformed session id on HEAD too, and answers HEAD with a well-formed one', async () => {
    for (const path of ['/memfs/live.m3u8?session=bad%20id', '/memfs/live0.ts?session=x']) {
      const response = await rawRequest(server.url, path, { method: 'HEAD', localAddress: VIEWER });
      assert.equal(response.status, 403, `HEAD ${path}`);
      // A failed HEAD carries no body, so no JSON content type either (as the reference; the UI relies on it).
      assert.equal(response.headers['content-type'], undefined);
    }
    for (const path of ['/memfs/live.m3u8?session=wellformed-1', '/memfs/live0.ts?session=wellformed-1']) {
      const response = await rawRequest(server.url, path, { method: 'HEAD', localAddress: VIEWER });
      assert.equal(response.status, 200, `HEAD ${path}`);
    }
  });

  it('serves ignored clients (loopback by default) the plain files without sessions', async () => {
    const response = await view(server, '/memfs/live.m3u8', '127.0.0.1');
    assert.equal(response.body.toString(), PLAYLIST);
  });

  it('closes an idle session after the timeout and keeps it in the history', async () => {
    const id = sessionIdOf((await view(server, '/memfs/live.m3u8')).body.toString());
    await view(server, `/memfs/live.m3u8?session=${id}`);
    await view(server, `/memfs/live1.ts?session=${id}`);
    await until('the session to be active', async () =>
      (await active(server)).some((s) => s.id === id) ? true : undefined,
    );
    const before = (await summary(server)).summary.sessions;
    await until('the session to close', async () =>
      (await active(server)).some((s) => s.id === id) ? undefined : true,
    );
    const after = await summary(server);
    assert.ok(after.summary.sessions > before, `${after.summary.sessions} > ${before}`);
    assert.ok((after.summary.remote[VIEWER]?.local['/memfs/live.m3u8']?.sessions ?? 0) >= 1);
    assert.ok((after.summary.reference.live?.sessions ?? 0) >= 1);
  });

  it('rewrites a real master playlist so its variants carry the session', async () => {
    const master = '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=200000\nlive.m3u8\n';
    await fetch(`${server.url}/memfs/main.m3u8`, { method: 'PUT', body: master });
    const response = await view(server, '/memfs/main.m3u8');
    const id = sessionIdOf(response.body.toString());
    assert.equal(response.body.toString(), master.replace('live.m3u8', `live.m3u8?session=${id}`));
  });

  it('counts viewers of playlists on the disk mount too', async () => {
    const dir = server.config.storage.disk.dir;
    await writeFile(join(dir, 'vod.m3u8'), PLAYLIST.replaceAll('live', 'vod'));
    await writeFile(join(dir, 'vod0.ts'), Buffer.alloc(1000));
    const master = (await view(server, '/vod.m3u8')).body.toString();
    const id = /session=([A-Za-z0-9_-]+)/.exec(master)?.[1];
    assert.ok(id);
    assert.equal((await view(server, `/vod0.ts?session=${id}`)).status, 200);
    await until('the disk viewer to be active', async () =>
      (await active(server)).some((s) => s.id === id && s.local === '/vod.m3u8') ? true : undefined,
    );
  });

  it('counts HTTP requests of non-ignored clients in the http collector', async () => {
    const before = (await summary(server, 'http')).summary.remote[VIEWER]?.sessions ?? 0;
    await view(server, '/memfs/live0.ts');
    await view(server, '/ping');
    const after = await until('two more http sessions', async () => {
      const count = (await summary(server, 'http')).summary.remote[VIEWER]?.sessions ?? 0;
      return count >= before + 2 ? count : undefined;
    });
    assert.equal(after, before + 2);
    assert.equal((await summary(server, 'http')).summary.remote['127.0.0.1'], undefined);
  });

  it('rejects an unknown collector name with 400', async () => {
    const response = await fetch(`${server.url}/api/v3/session?collectors=hls,nope`);
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { details: string[] }).details[0] ?? '', /nope/);
  });
});

describe('HLS session limits', () => {
  it('answers a second viewer with 509 and the envelope when max_sessions is 1', async () => {
    const server = await startWithStream({ sessions: { max_sessions: 1 } });
    try {
      const first = await view(server, '/memfs/live.m3u8');
      assert.equal(first.status, 200);
      const id = sessionIdOf(first.body.toString());
      await view(server, `/memfs/live0.ts?session=${id}`);
      const second = await rawRequest(server.url, '/memfs/live.m3u8', { localAddress: '127.0.0.3' });
      assert.equal(second.status, 509);
      assert.equal(second.headers['content-type'], 'application/json; charset=utf-8');
      const body = JSON.parse(second.body.toString()) as { code: number; message: string; details: string[] };
      assert.equal(body.code, 509);
      assert.equal(body.message, 'Bandwidth Limit Exceeded');
      assert.match(body.details[0] ?? '', /max_sessions/);
      // The first viewer keeps playing.
      assert.equal((await view(server, `/memfs/live.m3u8?session=${id}`)).status, 200);
      assert.equal((await summary(server)).active.max_sessions, 1);
    } finally {
      await server.close();
    }
  });
});

describe('HLS pending viewers and max_sessions', () => {
  it('lets another viewer play while a client that fetched the playlist twice never plays', async () => {
    const server = await startWithStream({ sessions: { max_sessions: 1, session_timeout_sec: 30 } });
    try {
      // The idle client: the hand-off, then the playlist under its session, and no segment.
      const handOff = await view(server, '/memfs/live.m3u8', '127.0.0.3');
      assert.equal(handOff.status, 200);
      const idle = sessionIdOf(handOff.body.toString());
      assert.equal((await view(server, `/memfs/live.m3u8?session=${idle}`, '127.0.0.3')).status, 200);
      assert.deepEqual(await active(server), []);

      // Another viewer is let in and plays: the pending client holds no slot.
      const viewer = await view(server, '/memfs/live.m3u8');
      assert.equal(viewer.status, 200, viewer.body.toString());
      const id = sessionIdOf(viewer.body.toString());
      assert.equal((await view(server, `/memfs/live.m3u8?session=${id}`)).status, 200);
      assert.equal((await view(server, `/memfs/live0.ts?session=${id}`)).status, 200);
      assert.deepEqual(
        (await active(server)).map((session) => session.id),
        [id],
      );

      // Now the slot is taken: the idle client cannot start playing, and no third viewer gets in.
      const late = await view(server, `/memfs/live0.ts?session=${idle}`, '127.0.0.3');
      assert.equal(late.status, 509);
      assert.match(
        (JSON.parse(late.body.toString()) as { details: string[] }).details[0] ?? '',
        /^sessions\.max_sessions: 1 of 1 /,
      );
      assert.equal((await view(server, '/memfs/live.m3u8', '127.0.0.4')).status, 509);
      // The playing viewer goes on.
      assert.equal((await view(server, `/memfs/live1.ts?session=${id}`)).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('HLS bitrate limit', () => {
  it('answers a new viewer with 509 naming max_bitrate_mbit once hls egress reaches the limit', async () => {
    const server = await startWithStream({ sessions: { max_bitrate_mbit: 1 } });
    try {
      // 2 MiB within the 10-second window is at least 1.6 Mbit/s: above 1 Mbit/s (1 048 576 bit/s).
      const size = 2 * 1024 * 1024;
      const put = await fetch(`${server.url}/memfs/big.ts`, { method: 'PUT', body: Buffer.alloc(size, 5) });
      assert.equal(put.status, 201);
      const first = await view(server, '/memfs/live.m3u8', '127.0.0.3');
      assert.equal(first.status, 200, 'below the limit a viewer is let in');
      const id = sessionIdOf(first.body.toString());
      assert.equal((await view(server, `/memfs/big.ts?session=${id}`, '127.0.0.3')).status, 200);
      await until('the egress counted', async () =>
        (await active(server)).some((s) => s.id === id && s.bytes_tx > size) ? true : undefined,
      );

      const refused = await view(server, '/memfs/live.m3u8');
      assert.equal(refused.status, 509);
      assert.equal(refused.headers['content-type'], 'application/json; charset=utf-8');
      const body = JSON.parse(refused.body.toString()) as {
        code: number;
        message: string;
        details: string[];
      };
      assert.equal(body.code, 509);
      assert.equal(body.message, 'Bandwidth Limit Exceeded');
      assert.equal(body.details.length, 1);
      assert.match(
        body.details[0] ?? '',
        /^sessions\.max_bitrate_mbit: hls egress \d+\.\d\d Mbit\/s reached the limit of 1 Mbit\/s$/,
      );
      // The viewer already watching continues.
      assert.equal((await view(server, `/memfs/live.m3u8?session=${id}`, '127.0.0.3')).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('HLS sessions with an empty ignore list', () => {
  it('counts loopback viewers', async () => {
    const server = await startWithStream({ sessions: { ip_ignorelist: [] } });
    try {
      const master = (await view(server, '/memfs/live.m3u8', '127.0.0.1')).body.toString();
      const id = sessionIdOf(master);
      await view(server, `/memfs/live0.ts?session=${id}`, '127.0.0.1');
      const list = await until('the loopback viewer', async () => {
        const sessions = await active(server);
        return sessions.length > 0 ? sessions : undefined;
      });
      assert.equal(list[0]?.remote, '127.0.0.1');
    } finally {
      await server.close();
    }
  });
});

describe('collectors without traffic of their own', () => {
  const FED_BY_NO_ONE = ['ffmpeg', 'rtmp', 'srt'];
  const SERIES = [
    'session_active',
    'session_limit',
    'session_maxrxbitrate',
    'session_maxtxbitrate',
    'session_rxbitrate',
    'session_rxbytes',
    'session_total',
    'session_txbitrate',
    'session_txbytes',
  ];

  it('have their session_* series in the metrics query and in /metrics, at zero', async () => {
    const server = await startServer({
      config: { metrics: { enable: true, enable_prometheus: true, interval_sec: 1, range_sec: 10 } },
    });
    try {
      const series = await until('the first collection of the session series', async () => {
        const response = await fetch(`${server.url}/api/v3/metrics`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            metrics: SERIES.map((name) => ({ name, labels: { collector: '^(ffmpeg|rtmp|srt)$' } })),
          }),
        });
        assert.equal(response.status, 200);
        const answer = (await response.json()) as {
          metrics: { name: string; labels: { collector: string }; values: [number, number][] }[];
        };
        return answer.metrics.length > 0 ? answer.metrics : undefined;
      });
      assert.deepEqual(
        series.map((s) => `${s.name}{${s.labels.collector}}`),
        SERIES.flatMap((name) => FED_BY_NO_ONE.map((collector) => `${name}{${collector}}`)),
      );
      for (const s of series) assert.equal(s.values.at(-1)?.[1], 0, `${s.name}{${s.labels.collector}}`);

      const exposition = await (await fetch(`${server.url}/metrics`)).text();
      for (const name of ['session_active', 'session_rx_bytes', 'session_total', 'session_tx_bytes']) {
        for (const collector of FED_BY_NO_ONE) {
          const line = `${name}{collector="${collector}",core="${server.config.id}"} 0`;
          assert.ok(exposition.split('\n').includes(line), `${line} in\n${exposition}`);
        }
      }
    } finally {
      await server.close();
    }
  });
});

/** The latest collected `session_rxbytes{collector="hlsingress"}` (active sessions included). */
async function ingestRxBytes(server: TestServer): Promise<number | undefined> {
  const response = await fetch(`${server.url}/api/v3/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metrics: [{ name: 'session_rxbytes', labels: { collector: '^hlsingress$' } }] }),
  });
  const answer = (await response.json()) as { metrics: { values: [number, number][] }[] };
  return answer.metrics[0]?.values[0]?.[1];
}

describe('HLS ingest sessions', () => {
  it('forms one hlsingress session per playlist from memfs PUTs, whatever the address', async () => {
    const server = await startWithStream({ metrics: { enable: true, interval_sec: 1, range_sec: 10 } });
    try {
      const ingest = await until('the ingest session', async () => {
        const list = await active(server, 'hlsingress');
        return list.length === 1 && (list[0]?.bytes_rx ?? 0) > 2 * SEGMENT_BYTES ? list : undefined;
      });
      assert.equal(ingest[0]?.local, '/memfs/live.m3u8');
      assert.equal(ingest[0]?.remote, '127.0.0.1');
      // Both segments and the playlist, with request headers.
      const body = 2 * SEGMENT_BYTES + PLAYLIST.length;
      assert.ok((ingest[0]?.bytes_rx ?? 0) >= body && (ingest[0]?.bytes_rx ?? 0) < body + 1000);

      // A file that is no part of HLS (a snapshot) is no ingest traffic; a segment is.
      const before = await until('the collected ingest bytes', async () => {
        const total = await ingestRxBytes(server);
        return total !== undefined && total >= body ? total : undefined;
      });
      const snapshot = await fetch(`${server.url}/memfs/snap.jpg`, {
        method: 'PUT',
        body: Buffer.alloc(100_000, 3),
      });
      assert.equal(snapshot.status, 201);
      const segment = await fetch(`${server.url}/memfs/live2.ts`, {
        method: 'PUT',
        body: Buffer.alloc(1000, 4),
      });
      assert.equal(segment.status, 201);
      const after = await until('the segment counted', async () => {
        const total = await ingestRxBytes(server);
        return total !== undefined && total >= before + 1000 ? total : undefined;
      });
      assert.ok(after < before + 100_000, `${after - before} bytes counted for a 1000-byte segment`);
    } finally {
      await server.close();
    }
  });
});

describe('session history persistence', () => {
  it('writes the history every persist_interval_sec while the server runs', async () => {
    const server = await startWithStream({ sessions: { persist: true, persist_interval_sec: 1 } });
    const file = join(server.config.db.dir, 'sessions', 'hls.json');
    const viewerSessionsInFile = async (): Promise<number | undefined> => {
      const text = await readFile(file, 'utf8').catch(() => undefined);
      if (text === undefined) return undefined;
      const saved = JSON.parse(text) as { entries: { remote: string; sessions: number }[] };
      return saved.entries.find((entry) => entry.remote === VIEWER)?.sessions ?? 0;
    };
    try {
      // Written within an interval of the start, with nothing in it yet.
      assert.equal(await until('the first periodic write', viewerSessionsInFile), 0);
      // A session that closes (timeout 2 s) reaches the file at a later tick, still without a shutdown.
      const id = sessionIdOf((await view(server, '/memfs/live.m3u8')).body.toString());
      await view(server, `/memfs/live0.ts?session=${id}`);
      const written = await until('the closed session in the file', async () => {
        const count = await viewerSessionsInFile();
        return count !== undefined && count > 0 ? count : undefined;
      });
      assert.equal(written, 1);
      assert.equal((await active(server)).length, 0, 'written while the server still runs, after the close');
    } finally {
      await server.close();
    }
  });

  it('writes <db.dir>/sessions/<collector>.json at shutdown and loads it at start', async () => {
    const first = await startWithStream({ sessions: { persist: true, persist_interval_sec: 60 } });
    const dir = first.dir;
    try {
      const id = sessionIdOf((await view(first, '/memfs/live.m3u8')).body.toString());
      await view(first, `/memfs/live0.ts?session=${id}`);
      await until('the session', async () => ((await active(first)).length === 1 ? true : undefined));
    } finally {
      await first.app.close();
    }
    const file = join(first.config.db.dir, 'sessions', 'hls.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      entries: { remote: string; sessions: number }[];
    };
    assert.deepEqual(
      saved.entries.map((e) => [e.remote, e.sessions]),
      [[VIEWER, 1]],
      'the open session was closed into the history at shutdown',
    );
    const second = await startWithStream({ sessions: { persist: true, persist_interval_sec: 60 } }, dir);
    try {
      const loaded = await summary(second);
      assert.equal(loaded.summary.sessions, 1);
      assert.ok(loaded.summary.traffic_tx_bytes > SEGMENT_BYTES);
    } finally {
      await second.close();
      const { rm } = await import('node:fs/promises');
      await rm(dir, { recursive: true, force: true });
    }
  });
});
