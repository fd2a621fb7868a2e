import { connect } from 'node:net';
import { readFileSync } from 'node:fs';

export interface StreamedPut {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  /** Body bytes the client managed to hand to its socket before the answer (or the reset) came. */
  sentBytes: number;
}

const CHUNK = Buffer.alloc(1024 * 1024, 0x61);

/**
 * PUTs `totalBytes` generated on the fly (one reused 1 MiB chunk, never a buffer of the whole
 * body) over a bare TCP socket. Like a naive client it goes on sending after an early answer,
 * until the body is out or the server drops the connection: `sentBytes` then tells how much the
 * server let in. `declare`: send `Content-Length` (default) or go chunked.
 */
export function streamedPut(
  url: string,
  options: { totalBytes: number; headers?: Record<string, string>; declare?: boolean },
): Promise<StreamedPut> {
  const declare = options.declare ?? true;
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let received = Buffer.alloc(0);
    const headers: Record<string, string> = {
      host: target.host,
      'content-type': 'application/octet-stream',
      ...(declare ? { 'content-length': String(options.totalBytes) } : { 'transfer-encoding': 'chunked' }),
      ...options.headers,
    };
    const head = [
      `PUT ${target.pathname} HTTP/1.1`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    const socket = connect(Number(target.port), target.hostname);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const answer = parseAnswer(received);
      if (answer === undefined) reject(new Error(`no answer after ${sentBytes} bytes`));
      else resolve({ ...answer, sentBytes });
    });
    const frame = (piece: Buffer): Buffer[] =>
      declare ? [piece] : [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')];
    const pump = (): void => {
      while (!socket.destroyed && sentBytes < options.totalBytes) {
        const piece = Math.min(CHUNK.length, options.totalBytes - sentBytes);
        sentBytes += piece;
        let flowing = true;
        for (const part of frame(piece === CHUNK.length ? CHUNK : CHUNK.subarray(0, piece)))
          flowing = socket.write(part) && flowing;
        if (!flowing) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed && !declare) socket.write('0\r\n\r\n');
      // The whole body is out: wait for the answer, then close.
      socket.once('data', () => setTimeout(() => socket.end(), 50));
    };
    socket.once('connect', () => {
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      pump();
    });
  });
}

/** Status, headers and body of one HTTP/1.1 answer in `bytes` (undefined when incomplete). */
function parseAnswer(bytes: Buffer): Omit<StreamedPut, 'sentBytes'> | undefined {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: bytes.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/** Resident set size of a process, bytes (`VmRSS` of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) * 1024;
}

/** Samples `rssBytes(pid)` every `intervalMs` until stopped; `stop` resolves with the peak. */
export function samplePeakRss(pid: number, intervalMs = 20): { stop: () => number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssBytes(pid));
    },
  };
}
