/**
 * A share of bench/hls-viewers.ts' viewers in a worker thread, so that a thousand simulated
 * players do not share one thread. Viewer `first + i` joins from 127.0.1.x as in the main file,
 * `joinGapMs` after the previous one of this thread; `received` (one Float64 slot) counts body
 * bytes as they arrive. On any message the viewers stop, and the thread answers their reports.
 */
import { setMaxListeners } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { playHls, type PlayerReport } from '../test/session/hls-player.js';

export interface ViewersWorkerData {
  url: string;
  first: number;
  count: number;
  joinGapMs: number;
  received: SharedArrayBuffer;
}

const { url, first, count, joinGapMs, received } = workerData as ViewersWorkerData;
const bytes = new Float64Array(received);
const stop = new AbortController();
// Every viewer waits on this one signal.
setMaxListeners(count * 2 + 10, stop.signal);
const reports: Promise<PlayerReport>[] = [];
parentPort?.once('message', () => {
  stop.abort();
  void Promise.all(reports).then((done) => parentPort?.postMessage(done));
});
for (let i = 0; i < count && !stop.signal.aborted; i++) {
  const localAddress = `127.0.1.${((first + i) % 250) + 1}`;
  const onBytes = (size: number): void => {
    bytes[0] = (bytes[0] as number) + size;
  };
  reports.push(playHls(url, { localAddress, onBytes, signal: stop.signal }));
  await new Promise((resolve) => setTimeout(resolve, joinGapMs));
}
