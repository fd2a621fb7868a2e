/**
 * A share of bench/rtmp-relay.ts' players, in a worker thread, so that parsing hundreds of
 * players' streams does not share one thread with the publisher it measures them against. Each
 * player writes its newest media timestamp, its media bytes and whether its connection ended into
 * `state` (three Float64 slots per player); the main thread reads them at its samples.
 * `kind` `rtmp`: RTMP clients that `play` live/bench; `raw`: the copy server's players (connect,
 * send `S`, parse the chunk stream as it comes).
 */
import { connect } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { ChunkReader } from '../src/ingest/rtmp/chunk-reader.js';
import { RtmpTestClient } from '../test/helpers/rtmp-client.js';

export interface PlayersWorkerData {
  kind: 'rtmp' | 'raw';
  port: number;
  count: number;
  /** Float64Array over it: [lastTimestamp, bytes, closed] per player of this worker. */
  state: SharedArrayBuffer;
}

const { kind, port, count, state } = workerData as PlayersWorkerData;
const slots = new Float64Array(state);
const closers: (() => void)[] = [];

async function rtmpPlayer(index: number): Promise<void> {
  const client = await RtmpTestClient.open(port);
  const status = await client.play('live', 'bench');
  // streamcore answers Reset then Start, as nginx-rtmp does; the reference Start alone.
  if (status !== 'NetStream.Play.Reset' && status !== 'NetStream.Play.Start') {
    throw new Error(`play answered ${status}`);
  }
  client.socket.on('data', () => {
    slots[index * 3] = client.lastMediaTimestamp;
    slots[index * 3 + 1] = client.mediaBytes;
  });
  client.socket.on('close', () => (slots[index * 3 + 2] = 1));
  closers.push(() => client.close());
}

function rawPlayer(index: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write('S');
      resolve();
    });
    let bytes = 0;
    const reader = new ChunkReader({ maxMessageBytes: 32 << 20, maxChunkStreams: 64 }, (message) => {
      if (message.typeId !== 8 && message.typeId !== 9) return;
      bytes += message.payload.length;
      slots[index * 3] = message.timestamp;
      slots[index * 3 + 1] = bytes;
    });
    socket.on('data', (data: Buffer) => reader.push(data));
    socket.on('error', () => undefined);
    socket.on('close', () => (slots[index * 3 + 2] = 1));
    closers.push(() => socket.destroy());
  });
}

for (let index = 0; index < count; index++) slots[index * 3] = -1;
// A few at a time: a thousand handshakes at once overflow a listen backlog.
for (let first = 0; first < count; first += 25) {
  const batch = Array.from({ length: Math.min(25, count - first) }, (_, i) => first + i);
  await Promise.all(batch.map((index) => (kind === 'rtmp' ? rtmpPlayer(index) : rawPlayer(index))));
}
parentPort?.postMessage('ready');
parentPort?.once('message', () => {
  for (const close of closers) close();
  parentPort?.close();
});
