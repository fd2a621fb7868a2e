// test-alone: its hostile peers are told apart from slow ones by timing
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeChunks } from '../../src/ingest/rtmp/chunk-writer.js';
import { RtmpSessions } from '../../src/ingest/rtmp-sessions.js';
import { IpIgnoreList } from '../../src/session/index.js';
import { SessionCollector } from '../../src/session/session-collector.js';
import { RtmpTestClient } from '../helpers/rtmp-client.js';
import { ffmpeg, publish, startRtmp, videoPackets, waitFor } from './rtmp-support.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'streamcore-rtmp-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('RTMP server with ffmpeg', () => {
  it('relays one publisher to three players, each from a keyframe to the last frame without gaps', async () => {
    const { server, port } = await startRtmp();
    try {
      const url = `rtmp://127.0.0.1:${port}/live/x`;
      const sent = join(dir, 'sent.flv');
      const publisher = publish(url, 8, sent);
      await waitFor(() => server.channels().includes('/live/x'), 'the stream to go live');
      const players = [0, 1, 2].map((index) =>
        ffmpeg(['-i', url, '-c', 'copy', '-copyts', '-f', 'flv', '-y', join(dir, `play-${index}.flv`)]),
      );
      const published = await publisher.done;
      assert.equal(published.code, 0, published.stderr);
      const sentPackets = await videoPackets(sent);
      assert.equal(sentPackets.length, 200);
      for (const [index, player] of players.entries()) {
        const result = await player.done;
        assert.equal(result.code, 0, `player ${index}: ${result.stderr}`);
        const packets = await videoPackets(join(dir, `play-${index}.flv`));
        assert.ok(packets.length >= 100, `player ${index}: only ${packets.length} frames`);
        assert.ok(packets[0]?.key, `player ${index} starts at a keyframe`);
        // With -copyts the player keeps the server's timestamps: it got exactly the sent frames from its first on.
        assert.deepEqual(
          packets,
          sentPackets.slice(-packets.length),
          `player ${index} got a suffix of what was sent`,
        );
      }
      assert.deepEqual(server.channels(), []);
    } finally {
      await server.close();
    }
  });

  it('refuses a missing or wrong token before any media, and accepts it in the query or as the last element', async () => {
    const { server, port } = await startRtmp({ token: 'secret' });
    try {
      for (const url of [`rtmp://127.0.0.1:${port}/live/x`, `rtmp://127.0.0.1:${port}/live/x?token=nope`]) {
        const refused = await publish(url, 1).done;
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /token/);
        assert.deepEqual(server.channels(), []);
      }
      for (const [url, path] of [
        [`rtmp://127.0.0.1:${port}/live/x?token=secret`, '/live/x'],
        [`rtmp://127.0.0.1:${port}/live/y/secret`, '/live/y'],
      ] as const) {
        const publisher = publish(url, 3);
        await waitFor(() => server.channels().includes(path), `${path} to go live`);
        const player = await RtmpTestClient.open(port);
        assert.equal(
          await player.play('live', path.slice(6)),
          'NetStream.Play.Failed',
          'play needs the token too',
        );
        const good = await RtmpTestClient.open(port);
        assert.equal(await good.play('live', `${path.slice(6)}?token=secret`), 'NetStream.Play.Reset');
        good.close();
        assert.equal((await publisher.done).code, 0);
      }
      // A raw client that ignores the refusal and sends media anyway never creates a stream.
      const raw = await RtmpTestClient.open(port);
      assert.equal(await raw.publish('live', 'z?token=bad'), 'NetStream.Publish.BadName');
      raw.sendMedia(9, 0, Buffer.from([0x17, 0, 0, 0, 0]));
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(server.channels(), []);
      raw.close();
    } finally {
      await server.close();
    }
  });

  it('refuses a second publisher to a live name and keeps the first', async () => {
    const { server, port } = await startRtmp();
    try {
      const url = `rtmp://127.0.0.1:${port}/live/x`;
      const first = publish(url, 4);
      await waitFor(() => server.channels().includes('/live/x'), 'the first publisher');
      const second = await publish(url, 1).done;
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /already being published/);
      assert.deepEqual(server.channels(), ['/live/x']);
      assert.equal((await first.done).code, 0);
    } finally {
      await server.close();
    }
  });

  it('frees the name when a publisher dies mid-stream, ends its players, and takes a new publisher', async () => {
    const { server, port } = await startRtmp();
    try {
      const url = `rtmp://127.0.0.1:${port}/live/x`;
      const first = publish(url, 30);
      await waitFor(() => server.channels().includes('/live/x'), 'the first publisher');
      const player = ffmpeg(['-i', url, '-c', 'copy', '-f', 'null', '-']);
      await waitFor(() => (server.stream('/live/x')?.playerCount ?? 0) === 1, 'the player');
      first.child.kill('SIGKILL');
      await waitFor(() => server.channels().length === 0, 'the name to be freed');
      await player.done;
      const second = publish(url, 2);
      await waitFor(() => server.channels().includes('/live/x'), 'the second publisher');
      assert.equal((await second.done).code, 0);
    } finally {
      await server.close();
    }
  });
});

describe('RTMP server against hostile peers', () => {
  it('survives random and mutated bytes on 200 connections and still serves a publisher', async () => {
    const { server, port } = await startRtmp();
    try {
      const valid = Buffer.concat([
        Buffer.from([3]),
        randomBytes(1536 * 2),
        ...Array.from({ length: 30 }, (_, index) =>
          encodeChunks(
            {
              typeId: [20, 9, 8, 18, 1][index % 5] as number,
              streamId: index % 2,
              timestamp: index,
              payload: randomBytes(300),
            },
            3 + (index % 4),
            128,
          ),
        ),
      ]);
      const peers: Promise<void>[] = [];
      for (let round = 0; round < 200; round++) {
        const bytes = round % 2 === 0 ? randomBytes(5000) : Buffer.from(valid);
        if (round % 2 === 1)
          for (let flip = 0; flip < 20; flip++)
            bytes[3073 + Math.floor(Math.random() * (bytes.length - 3073))] = Math.floor(Math.random() * 256);
        peers.push(
          new Promise((resolve) => {
            const socket = connect({ host: '127.0.0.1', port }, () => socket.end(bytes));
            socket.on('error', () => resolve());
            socket.on('close', () => resolve());
            socket.resume();
          }),
        );
      }
      await Promise.all(peers);
      const publisher = publish(`rtmp://127.0.0.1:${port}/live/after`, 2);
      await waitFor(() => server.channels().includes('/live/after'), 'a publisher after the fuzzing');
      assert.equal((await publisher.done).code, 0);
    } finally {
      await server.close();
    }
  });

  it('closes a stalled publisher, and skips then drops a player that does not read', async () => {
    const { server, port } = await startRtmp({
      idleTimeoutMs: 1500,
      relay: { maxPlayerQueueBytes: 1024 * 1024, maxBehindMs: 1500 },
    });
    try {
      const stalled = await RtmpTestClient.open(port);
      assert.equal(await stalled.publish('live', 'stalled'), 'NetStream.Publish.Start');
      await waitFor(() => server.channels().length === 0, 'the stalled publisher to be closed', 5000);

      const flooder = await RtmpTestClient.open(port);
      assert.equal(await flooder.publish('live', 'flood'), 'NetStream.Publish.Start');
      const slow = await RtmpTestClient.open(port);
      assert.equal(await slow.play('live', 'flood'), 'NetStream.Play.Reset');
      slow.socket.pause();
      const reader = await RtmpTestClient.open(port);
      assert.equal(await reader.play('live', 'flood'), 'NetStream.Play.Reset');
      const stream = server.stream('/live/flood');
      assert.ok(stream !== undefined);
      // 40 MB of keyframes as fast as the socket takes them.
      const frame = Buffer.concat([Buffer.from([0x17, 1, 0, 0, 0]), randomBytes(100_000)]);
      for (let index = 0; index < 400; index++) {
        if (!flooder.sendMedia(9, index * 40, frame))
          await new Promise((resolve) => flooder.socket.once('drain', resolve));
      }
      // A player that reads gets the live edge. On a busy machine it may skip some of the flood on
      // the way (the event loop reads the publisher in bursts that outrun the player's socket
      // buffers), as any player over its bound does; what it must not do is stay behind.
      await waitFor(
        () => reader.lastMediaTimestamp === 399 * 40,
        'the reading player to reach the last frame',
        20_000,
      );
      assert.ok(reader.mediaMessages >= 100, `the reading player got ${reader.mediaMessages} of 400 frames`);
      assert.ok(stream.skippedTags > 0, 'the slow player skipped');
      // The publisher goes on at a trickle: silent, it would be closed by the same 1.5 s idle
      // time-out, and the stream with it, racing the slow player's drop.
      const small = Buffer.concat([Buffer.from([0x27, 1, 0, 0, 0]), randomBytes(100)]);
      let timestamp = 400 * 40;
      const trickle = setInterval(() => flooder.sendMedia(9, (timestamp += 40), small), 200);
      try {
        await waitFor(() => stream.playerCount === 1, 'the slow player to be dropped', 10_000);
      } finally {
        clearInterval(trickle);
      }
      assert.equal(server.stream('/live/flood'), stream, 'the publisher stayed');
      flooder.close();
      reader.close();
      slow.close();
    } finally {
      await server.close();
    }
  });
});

describe('RTMP sessions', () => {
  it('counts publisher and players, refuses a player over sessions.max_sessions, and skips ignored addresses', async () => {
    const collector = new SessionCollector('rtmp', {
      now: Date.now,
      timeoutMs: 30_000,
      pendingTimeoutMs: 5_000,
      limits: { maxSessions: 2, maxTxBitrate: 0, maxRxBitrate: 0 },
    });
    const { server, port } = await startRtmp({ sessions: new RtmpSessions(collector, new IpIgnoreList([])) });
    try {
      const publisher = await RtmpTestClient.open(port);
      assert.equal(await publisher.publish('live', 'x'), 'NetStream.Publish.Start');
      const first = await RtmpTestClient.open(port);
      assert.equal(await first.play('live', 'x'), 'NetStream.Play.Reset');
      const second = await RtmpTestClient.open(port);
      assert.equal(await second.play('live', 'x'), 'NetStream.Play.Failed');
      assert.equal(collector.stats().active, 2);
      assert.deepEqual(
        collector.activeSessions().map((session) => session.local),
        ['publish:/live/x', 'play:/live/x'],
      );
      first.close();
      await waitFor(() => collector.stats().active === 1, 'the player session to close');
      assert.equal(collector.stats().total, 2);
      publisher.close();
    } finally {
      await server.close();
    }
    const ignoring = new SessionCollector('rtmp', {
      now: Date.now,
      timeoutMs: 30_000,
      pendingTimeoutMs: 5_000,
      limits: { maxSessions: 1, maxTxBitrate: 0, maxRxBitrate: 0 },
    });
    const local = await startRtmp({
      sessions: new RtmpSessions(ignoring, new IpIgnoreList(['127.0.0.1/32'])),
    });
    try {
      const publisher = await RtmpTestClient.open(local.port);
      assert.equal(await publisher.publish('live', 'x'), 'NetStream.Publish.Start');
      const player = await RtmpTestClient.open(local.port);
      assert.equal(await player.play('live', 'x'), 'NetStream.Play.Reset', 'ignored clients are not limited');
      assert.equal(ignoring.stats().total, 0);
      publisher.close();
      player.close();
    } finally {
      await local.server.close();
    }
  });
});
