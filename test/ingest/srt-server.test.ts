// test-alone: libsrt's latency window decides which frames a player gets
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SessionCollector } from '../../src/session/session-collector.js';
import type { SrtServer } from '../../src/ingest/srt/index.js';
import { ffmpeg, waitFor, type Ffmpeg } from './rtmp-support.js';
import { playSrt, publishSrt, SRT_SKIP, srtUrl, startSrt, videoFrameSizes } from './srt-support.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'streamcore-srt-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Where a player's video frames sit among the sent ones: the index of the sent frame its second
 * frame is, when its frames are the sent ones in order with none missing. The first and the last
 * are left out: a player that joins mid-packet or is cut off mid-packet gets them truncated. Frames are told apart by their sizes: the sender's MPEG-TS
 * muxer and the player's remuxer write different timestamps and keyframe marks.
 */
function contiguousRun(sent: number[], got: number[], who: string): number {
  const whole = got.slice(1, -1);
  assert.ok(whole.length >= 50, `${who} got only ${got.length} frames`);
  for (let start = 0; start + whole.length <= sent.length; start++) {
    if (whole.every((size, index) => size === sent[start + index])) return start;
  }
  const first = sent.indexOf(whole[0] ?? -1);
  const matching = whole.findIndex((size, index) => size !== sent[first + index]);
  assert.fail(
    `${who}'s ${whole.length} frames are not a gapless run of the ${sent.length} sent: ` +
      `from sent frame ${first}, frame ${matching} differs`,
  );
}

describe('SRT server with ffmpeg', { skip: SRT_SKIP }, () => {
  it('relays one publisher to three players: each gets the sent frames without a gap to the end', async () => {
    const { server, port } = await startSrt();
    try {
      const sent = join(dir, 'sent.ts');
      const publisher = publishSrt(srtUrl(port, 'x,mode:publish'), 60, sent);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const players = [0, 1, 2].map((index) => playSrt(srtUrl(port, 'x'), join(dir, `play-${index}.ts`)));
      // However slowly the players start on a loaded machine, each gets several seconds.
      await waitFor(
        () => playersSent(server, 'x', 3) >= 800_000,
        'three players to be sent 800 kB each',
        30_000,
      );
      await endPublisher(publisher);
      const sentFrames = await videoFrameSizes(sent);
      assert.ok(sentFrames.length > 100, `the publisher sent ${sentFrames.length} frames`);
      for (const [index, player] of players.entries()) {
        await player.done;
        const got = await videoFrameSizes(join(dir, `play-${index}.ts`));
        const start = contiguousRun(sentFrames, got, `player ${index}`);
        // The end: what the server and the player still held in their latency buffers when the
        // publisher left is lost (docs/ingest.md); with 120 ms latency that is well under 0.5 s.
        const missingAtEnd = sentFrames.length - (start + got.length - 2);
        assert.ok(missingAtEnd <= 12, `player ${index} lost the last ${missingAtEnd} frames`);
      }
      assert.deepEqual(server.resources(), []);
    } finally {
      server.close();
    }
  });

  it("reserves a player's receive buffer for its acknowledgements only; a publisher's keeps libsrt's", async () => {
    const { server, port } = await startSrt();
    try {
      const publisher = publishSrt(srtUrl(port, 'small,mode:publish'), 30);
      await waitFor(() => server.resources().includes('small'), 'the stream to go live');
      const player = playSrt(srtUrl(port, 'small'), join(dir, 'small.ts'));
      await waitFor(() => playersSent(server, 'small', 1) >= 100_000, 'the player to be sent 100 kB', 30_000);
      const channels = server.channels();
      const freeBytes = (socket: number | undefined): number =>
        channels.connections[String(socket)]?.stats.avail_recv_buf_bytes ?? Number.NaN;
      // 64 packets, ~94 kB (native/srt/src/listener.cc); libsrt's default, 8 192 packets, ~12 MB.
      assert.ok(
        freeBytes(channels.subscriber.small?.[0]) < 200_000,
        `player: ${freeBytes(channels.subscriber.small?.[0])}`,
      );
      assert.ok(
        freeBytes(channels.publisher.small) >= 4_000_000,
        `publisher: ${freeBytes(channels.publisher.small)}`,
      );
      player.child.kill('SIGKILL');
      await endPublisher(publisher);
    } finally {
      server.close();
    }
  });

  it('refuses a second publisher, a player of nothing and an unknown mode; frees the name when the publisher leaves', async () => {
    const { server, port, logs } = await startSrt();
    try {
      const first = publishSrt(srtUrl(port, 'x,mode:publish'), 60);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const second = await publishSrt(srtUrl(port, 'x,mode:publish'), 1).done;
      assert.notEqual(second.code, 0, 'a second publisher to a live name is refused');
      const nothing = await playSrt(srtUrl(port, 'nothing'), join(dir, 'nothing.ts')).done;
      assert.notEqual(nothing.code, 0, 'a player of a name nobody publishes is refused');
      const oddMode = await playSrt(srtUrl(port, 'x,mode:play'), join(dir, 'odd.ts')).done;
      assert.notEqual(oddMode.code, 0, 'mode:play is not a mode');
      assert.deepEqual(
        logs.filter((line) => line.includes('refused')),
        [
          'srt publish refused (1409): already publishing',
          'srt request refused (1404): no publisher for this resource found',
          'srt play refused (1405): invalid connection mode',
        ],
      );
      await endPublisher(first);
      await waitFor(() => server.resources().length === 0, 'the name to be free');
      const again = await publishSrt(srtUrl(port, 'x,mode:publish'), 1).done;
      assert.equal(again.code, 0, again.stderr);
    } finally {
      server.close();
    }
  });

  it('refuses a missing or wrong token, and lets publisher and player with it through', async () => {
    const { server, port, logs } = await startSrt({ token: 'se,cret' });
    try {
      for (const id of ['x,mode:publish', 'x,mode:publish,token:nope', 'x,token:se,mode:publish']) {
        const refused = await publishSrt(srtUrl(port, id), 1).done;
        assert.notEqual(refused.code, 0, `${id} is refused`);
      }
      assert.deepEqual(server.resources(), []);
      assert.deepEqual(
        logs.filter((line) => line.includes('refused')),
        [
          'srt publish refused (1401): token required',
          'srt publish refused (1401): invalid token',
          'srt publish refused (1401): invalid token',
        ],
      );
      // A token may hold a comma: it runs to the next ",mode:" or the end.
      const publisher = publishSrt(srtUrl(port, 'x,mode:publish,token:se,cret'), 60);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const refusedPlayer = await playSrt(srtUrl(port, 'x,token:wrong'), join(dir, 'bad.ts')).done;
      assert.notEqual(refusedPlayer.code, 0);
      const player = await ffmpegPlay(srtUrl(port, '#!::r=x,token=se'), 1);
      assert.notEqual(player.code, 0, 'the "#!:" form splits at commas: token "se" is wrong');
      const good = await ffmpegPlay(srtUrl(port, 'x,token:se,cret'), 1);
      assert.equal(good.code, 0, good.stderr);
      await endPublisher(publisher);
    } finally {
      server.close();
    }
  });

  it('requires the passphrase: none, a wrong one and one on an unencrypted server are refused', async () => {
    const passphrase = 'correct-horse-battery';
    const { server, port } = await startSrt({ passphrase });
    const plain = await startSrt();
    try {
      for (const given of ['', 'wrong-passphrase-1']) {
        const refused = await publishSrt(srtUrl(port, 'x,mode:publish', given), 1).done;
        assert.notEqual(refused.code, 0, `passphrase "${given}" is refused`);
      }
      const encryptedToPlain = await publishSrt(srtUrl(plain.port, 'x,mode:publish', passphrase), 1).done;
      assert.notEqual(
        encryptedToPlain.code,
        0,
        'an encrypting caller is refused by a server without passphrase',
      );
      const publisher = publishSrt(srtUrl(port, 'x,mode:publish', passphrase), 60);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const unencryptedPlayer = await ffmpegPlay(srtUrl(port, 'x'), 1);
      assert.notEqual(unencryptedPlayer.code, 0);
      const player = await ffmpegPlay(srtUrl(port, 'x', passphrase), 1);
      assert.equal(player.code, 0, player.stderr);
      await endPublisher(publisher);
    } finally {
      server.close();
      plain.server.close();
    }
  });

  it('keeps relaying to a good player while another is frozen, and drops the frozen one', async () => {
    const { server, port, logs } = await startSrt();
    try {
      const sent = join(dir, 'sent-frozen.ts');
      const publisher = publishSrt(srtUrl(port, 'x,mode:publish'), 60, sent);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const frozen = playSrt(srtUrl(port, 'x'), join(dir, 'frozen.ts'));
      const good = playSrt(srtUrl(port, 'x'), join(dir, 'good.ts'));
      await waitFor(() => (server.channels().subscriber.x?.length ?? 0) === 2, 'two players');
      frozen.child.kill('SIGSTOP');
      // libsrt drops what the frozen player's send buffer holds past ~1 s, and the connection
      // once the peer has been silent for its idle timeout (5 s).
      await waitFor(
        () => (server.channels().subscriber.x?.length ?? 0) === 1,
        'the frozen player to be dropped',
        25_000,
      );
      // The list reads libsrt's state, which drops the player before its 'closed' event reaches
      // the server's thread and is logged: on a busy machine that takes a moment.
      await waitFor(
        () => logs.some((line) => line === 'srt request stop: disconnected'),
        "the frozen player's stop to be logged",
        5000,
      );
      frozen.child.kill('SIGKILL');
      await frozen.done;
      // The good player is still served: it is sent more after the frozen one is gone.
      const before = playersSent(server, 'x', 1);
      await waitFor(
        () => playersSent(server, 'x', 1) > before + 50_000,
        'the good player to be sent more',
        15_000,
      );
      await endPublisher(publisher);
      await good.done;
      const sentFrames = await videoFrameSizes(sent);
      const got = await videoFrameSizes(join(dir, 'good.ts'));
      const start = contiguousRun(sentFrames, got, 'the good player');
      assert.ok(sentFrames.length - (start + got.length - 2) <= 12, 'the good player got to the end');
    } finally {
      server.close();
    }
  });

  it('ends players when the publisher dies mid-stream, and relays the next publisher of the name', async () => {
    const collector = newCollector(0);
    const { server, port } = await startSrt({ collector });
    try {
      const first = publishSrt(srtUrl(port, 'x,mode:publish'), 30);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const player = playSrt(srtUrl(port, 'x'), join(dir, 'cut.ts'));
      await waitFor(() => (server.channels().subscriber.x?.length ?? 0) === 1, 'the player');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      first.child.kill('SIGKILL');
      // libsrt notices a silent peer after its idle timeout (5 s): then the player is ended too.
      await player.done;
      await waitFor(() => server.resources().length === 0, 'the name to be free', 15_000);
      assert.equal(collector.stats().active, 0);
      const second = publishSrt(srtUrl(port, 'x,mode:publish'), 60);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live again');
      const again = await ffmpegPlay(srtUrl(port, 'x'), 1);
      assert.equal(again.code, 0, again.stderr);
      await endPublisher(second);
      await waitFor(() => collector.stats().active === 0, 'the sessions to close');
      assert.equal(collector.stats().total, 4, 'two publishers and two players were sessions');
      assert.ok(collector.stats().rxBytes > 100_000, 'publishers sent bytes');
      assert.ok(collector.stats().txBytes > 50_000, 'players were sent bytes');
    } finally {
      server.close();
    }
  });
});

/** Ends a publisher as Ctrl-C would: ffmpeg finishes its outputs (the recorded copy too). */
async function endPublisher(publisher: Ffmpeg): Promise<void> {
  publisher.child.kill('SIGINT');
  await publisher.done;
}

/** The fewest bytes the server has sent any of a resource's players, 0 unless it has `count`. */
function playersSent(server: SrtServer, resource: string, count: number): number {
  const channels = server.channels();
  const players = channels.subscriber[resource] ?? [];
  if (players.length !== count) return 0;
  return Math.min(...players.map((socket) => channels.connections[String(socket)]?.stats.sent_bytes ?? 0));
}

function newCollector(maxSessions: number): SessionCollector {
  return new SessionCollector('srt', {
    now: Date.now,
    timeoutMs: 30_000,
    pendingTimeoutMs: 5_000,
    limits: { maxSessions, maxTxBitrate: 0, maxRxBitrate: 0 },
  });
}

describe('SRT sessions', { skip: SRT_SKIP }, () => {
  it('counts publisher and player with their bytes, and closes a player over sessions.max_sessions', async () => {
    const collector = newCollector(2);
    const { server, port } = await startSrt({ collector });
    try {
      const publisher = publishSrt(srtUrl(port, 'x,mode:publish'), 60);
      await waitFor(() => server.resources().includes('x'), 'the stream to go live');
      const first = playSrt(srtUrl(port, 'x'), join(dir, 'first.ts'));
      await waitFor(() => collector.stats().active === 2, 'two sessions');
      const over = await ffmpegPlay(srtUrl(port, 'x'), 1);
      assert.notEqual(over.code, 0, 'a third session is refused');
      assert.deepEqual(
        collector.activeSessions().map((session) => [session.local, session.reference]),
        [
          ['publish:x', 'x'],
          ['play:x', 'x'],
        ],
      );
      await waitFor(
        () => collector.activeSessions().every((session) => session.rxBytes + session.txBytes > 20_000),
        'bytes to be counted each second',
      );
      const [publisherSession, playerSession] = collector.activeSessions();
      assert.ok((publisherSession?.rxBytes ?? 0) > 20_000, 'the publisher sent bytes');
      assert.ok((playerSession?.txBytes ?? 0) > 20_000, 'the player was sent bytes');
      await endPublisher(publisher);
      await first.done;
      await waitFor(() => collector.stats().active === 0, 'the sessions to close');
      assert.equal(collector.stats().total, 2, 'the refused player was never a session');
    } finally {
      server.close();
    }
  });
});

/** An ffmpeg player that decodes `seconds` of the stream and ends. */
function ffmpegPlay(url: string, seconds: number): Promise<{ code: number | null; stderr: string }> {
  return ffmpeg(['-i', url, '-t', String(seconds), '-f', 'null', '-']).done;
}
