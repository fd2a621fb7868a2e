import { gzip } from 'node:zlib';

/**
 * An answer body that is sent many times: its bytes, and its gzip encoding made once on first
 * demand (answers change at most once per collection tick, so each is compressed at most once).
 */
export class EncodedBody {
  readonly bytes: Buffer;
  private gzipped: Promise<Buffer> | undefined;
  /** The encoding once made, for callers that must answer synchronously. */
  private gzippedBytes: Buffer | undefined;

  constructor(text: string | Buffer) {
    this.bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  }

  /** The gzip encoding (compressed off the event loop, then kept). */
  gzip(): Promise<Buffer> {
    this.gzipped ??= new Promise((resolve, reject) => {
      gzip(this.bytes, (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        this.gzippedBytes = result;
        resolve(result);
      });
    });
    return this.gzipped;
  }

  /** The gzip encoding if it is made already, else undefined (and nothing is started). */
  gzippedIfReady(): Buffer | undefined {
    return this.gzippedBytes;
  }
}
