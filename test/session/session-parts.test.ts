import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BitrateWindow } from '../../src/session/bitrate-window.js';
import { SessionHistory } from '../../src/session/history.js';
import { IpIgnoreList } from '../../src/session/ip-ignorelist.js';
import {
  addQueryParam,
  handOffMasterPlaylist,
  isMasterPlaylist,
  playlistSegments,
  playlistUris,
  resolvePlaylistUri,
  rewritePlaylistUris,
} from '../../src/session/playlist.js';
import { referenceOf } from '../../src/session/reference.js';
import { SessionCollector } from '../../src/session/session-collector.js';
import { isValidSessionId, newSessionId } from '../../src/session/session-id.js';

const MEDIA = `#EXTM3U
#EXT-X-VERSION:3
#EXT-X-TARGETDURATION:2
#EXT-X-MEDIA-SEQUENCE:7
#EXT-X-MAP:URI="init.mp4"
#EXTINF:2.000000,
cam1_0007.ts
#EXTINF:1.500000,
sub/cam1_0008.ts?x=1
#EXTINF:2.0,
https://cdn.example/cam1_0009.ts
`;

const MASTER = `#EXTM3U
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio/en.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="a"
low/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=2000000,AUDIO="a"
/abs/high.m3u8
`;

describe('playlist', () => {
  it('tells master from media playlists', () => {
    assert.equal(isMasterPlaylist(MASTER), true);
    assert.equal(isMasterPlaylist(MEDIA), false);
  });

  it('lists URIs and segments with durations', () => {
    assert.deepEqual(playlistUris(MASTER), ['low/index.m3u8', '/abs/high.m3u8']);
    assert.deepEqual(playlistSegments(MEDIA), [
      { uri: 'cam1_0007.ts', durationSec: 2 },
      { uri: 'sub/cam1_0008.ts?x=1', durationSec: 1.5 },
      { uri: 'https://cdn.example/cam1_0009.ts', durationSec: 2 },
    ]);
  });

  it('adds the session to every local URI, tag attributes included, and leaves other servers alone', () => {
    const rewritten = rewritePlaylistUris(MEDIA, (uri) => addQueryParam(uri, 'session', 'abc'));
    assert.equal(
      rewritten,
      MEDIA.replace('init.mp4', 'init.mp4?session=abc')
        .replace('cam1_0007.ts', 'cam1_0007.ts?session=abc')
        .replace('cam1_0008.ts?x=1', 'cam1_0008.ts?x=1&session=abc'),
    );
    const master = rewritePlaylistUris(MASTER, (uri) => addQueryParam(uri, 'session', 'abc'));
    assert.match(master, /URI="audio\/en\.m3u8\?session=abc"/);
    assert.match(master, /^low\/index\.m3u8\?session=abc$/m);
    assert.match(master, /^\/abs\/high\.m3u8\?session=abc$/m);
    assert.equal(addQueryParam('a.ts#t=1', 'session', 'x'), 'a.ts?session=x#t=1');
    assert.equal(addQueryParam('data:foo', 'session', 'x'), 'data:foo');
  });

  it('resolves URIs against the playlist path', () => {
    assert.equal(resolvePlaylistUri('/memfs/live/a.m3u8', 'seg1.ts'), '/memfs/live/seg1.ts');
    assert.equal(resolvePlaylistUri('/memfs/live/a.m3u8', '../b/seg1.ts?x=1'), '/memfs/b/seg1.ts');
    assert.equal(resolvePlaylistUri('/memfs/a.m3u8', '/memfs/x.ts'), '/memfs/x.ts');
    assert.equal(resolvePlaylistUri('/memfs/a.m3u8', 'http://other/x.ts'), undefined);
  });

  it('builds the hand-off master playlist', () => {
    assert.equal(
      handOffMasterPlaylist('live.m3u8?session=abc', 123456.7),
      '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=123457\nlive.m3u8?session=abc\n',
    );
  });

  it('names the reference after the playlist file', () => {
    assert.equal(referenceOf('/memfs/cam1.m3u8'), 'cam1');
    assert.equal(referenceOf('/a/b/live.stream.m3u8'), 'live.stream');
  });
});

describe('session ids', () => {
  it('hands out valid ids and refuses malformed ones', () => {
    const id = newSessionId();
    assert.equal(id.length, 22);
    assert.equal(isValidSessionId(id), true);
    for (const bad of ['', 'short', 'has space in it', '../../etc/x', 'x'.repeat(65), 'ünïcödé-ünïcödé']) {
      assert.equal(isValidSessionId(bad), false, bad);
    }
  });
});

describe('BitrateWindow', () => {
  it('averages over the last 10 seconds, and over its age while younger', () => {
    const window = new BitrateWindow(0);
    window.add(1000, 0);
    assert.equal(window.bitrate(500), 8000, 'younger than a second: over one second');
    for (let second = 1; second < 20; second++) window.add(1000, second * 1000);
    assert.equal(window.bitrate(19_500), 8000);
    assert.equal(window.bitrate(24_500), 4000, 'five empty seconds halve the rate');
    assert.equal(window.bitrate(40_000), 0);
  });
});

describe('SessionHistory', () => {
  it('groups by remote, local and reference, and folds beyond its bound', () => {
    const history = new SessionHistory(2);
    history.add('1.1.1.1', '/a.m3u8', 'a', 10, 100);
    history.add('1.1.1.1', '/a.m3u8', 'a', 5, 50);
    history.add('2.2.2.2', '/a.m3u8', 'a', 1, 1);
    history.add('3.3.3.3', '/b.m3u8', 'b', 1, 1);
    history.add('4.4.4.4', '/c.m3u8', 'c', 1, 1);
    assert.deepEqual(history.total, { sessions: 5, rx_bytes: 18, tx_bytes: 153 });
    assert.deepEqual(
      history.list().map((e) => [e.remote, e.sessions]),
      [
        ['1.1.1.1', 2],
        ['2.2.2.2', 1],
        ['*', 2],
      ],
    );
  });

  it('round-trips through its file form and skips malformed entries', () => {
    const history = new SessionHistory();
    history.add('1.1.1.1', '/a.m3u8', 'a', 10, 100);
    const file = JSON.parse(JSON.stringify(history.toFile())) as { entries: unknown[] };
    file.entries.push(
      { remote: 'x', local: 'y', reference: 'z', sessions: -1, rx_bytes: 0, tx_bytes: 0 },
      'junk',
    );
    const loaded = new SessionHistory();
    assert.deepEqual(loaded.load(file), { loaded: 1, skipped: 2 });
    assert.deepEqual(loaded.total, { sessions: 1, rx_bytes: 10, tx_bytes: 100 });
  });
});

describe('IpIgnoreList', () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses against CIDRs', () => {
    const list = new IpIgnoreList(['127.0.0.1/32', '::1/128', '10.0.0.0/8', '192.168.1.5']);
    assert.equal(list.ignores('127.0.0.1'), true);
    assert.equal(list.ignores('::ffff:127.0.0.1'), true);
    assert.equal(list.ignores('::1'), true);
    assert.equal(list.ignores('10.200.3.4'), true);
    assert.equal(list.ignores('192.168.1.5'), true);
    assert.equal(list.ignores('192.168.1.6'), false);
    assert.equal(list.ignores('127.0.0.2'), false);
    assert.equal(new IpIgnoreList([]).ignores('127.0.0.1'), false);
  });
});

describe('SessionCollector', () => {
  const make = (clock: { now: number }, maxSessions = 0, maxTxBitrate = 0): SessionCollector =>
    new SessionCollector('hls', {
      now: () => clock.now,
      timeoutMs: 30_000,
      pendingTimeoutMs: 5_000,
      limits: { maxSessions, maxTxBitrate, maxRxBitrate: 0 },
    });

  it('holds no slot for pending sessions, only for active ones, and drops pending ones after their timeout', () => {
    const clock = { now: 1_000_000 };
    const collector = make(clock, 2);
    const first = collector.open({
      id: 'a'.repeat(22),
      remote: 'r',
      local: '/l.m3u8',
      reference: 'l',
      active: false,
    });
    collector.open({ id: 'b'.repeat(22), remote: 'r', local: '/l.m3u8', reference: 'l', active: false });
    collector.open({ id: 'd'.repeat(22), remote: 'r', local: '/l.m3u8', reference: 'l', active: false });
    assert.equal(collector.stats().active, 0);
    assert.equal(collector.limitExceeded(), undefined, 'three pending viewers hold none of the two slots');
    collector.touch(first, true);
    const second = collector.open({
      id: 'e'.repeat(22),
      remote: 'r',
      local: '/l.m3u8',
      reference: 'l',
      active: false,
    });
    collector.touch(second, true);
    assert.match(collector.limitExceeded() ?? '', /^sessions\.max_sessions: 2 of 2/);
    clock.now += 5_001;
    collector.sweep();
    assert.equal(collector.stats().total, 2, 'a pending session never counts as a session');
  });

  it('keeps totals growing while sessions are open and moves idle ones into the history', () => {
    const clock = { now: 1_000_000 };
    const collector = make(clock);
    const session = collector.open({
      id: 'c'.repeat(22),
      remote: 'r',
      local: '/l.m3u8',
      reference: 'l',
      active: false,
    });
    collector.touch(session, true);
    collector.countBytes(100, 10_000, session);
    let stats = collector.stats();
    assert.deepEqual([stats.active, stats.total, stats.rxBytes, stats.txBytes], [1, 1, 100, 10_000]);
    clock.now += 29_000;
    collector.sweep();
    assert.equal(collector.stats().active, 1);
    clock.now += 1_001 + 1;
    collector.sweep();
    stats = collector.stats();
    assert.deepEqual([stats.active, stats.total, stats.rxBytes, stats.txBytes], [0, 1, 100, 10_000]);
    assert.deepEqual(collector.history.list(), [
      { remote: 'r', local: '/l.m3u8', reference: 'l', sessions: 1, rx_bytes: 100, tx_bytes: 10_000 },
    ]);
  });

  it('refuses new sessions when egress reaches the bitrate limit', () => {
    const clock = { now: 1_000_000 };
    const collector = make(clock, 0, 1_048_576);
    collector.countBytes(0, 2_000_000);
    assert.match(collector.limitExceeded() ?? '', /^sessions\.max_bitrate_mbit:/);
    clock.now += 11_000;
    assert.equal(collector.limitExceeded(), undefined);
  });
});
