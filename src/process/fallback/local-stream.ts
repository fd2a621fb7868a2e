import type { FlvTag } from './flv.js';

/**
 * A stream of this server's own (its RTMP server's) that a relay reads in the server instead of
 * through a feeder ffmpeg: the primary's packets as they arrive, at no cost of a process
 * (docs/processes.md#fallback-sources).
 */
export interface LocalStream {
  /**
   * Starts delivering its tags (metadata and sequence headers first). `onEnd` comes when the
   * stream ends, and soon after the call when it is not published. Answers how to stop.
   */
  open(onTag: (tag: FlvTag) => void, onEnd: (reason: string) => void): () => void;
}

/** The server's own stream at `address` (resolved), or undefined where a feeder must read it. */
export type LocalStreams = (address: string) => LocalStream | undefined;

/** A primary read in the server; started, stopped and ended as a feeder is. */
export class LocalFeeder {
  private close: (() => void) | undefined;
  private ended = false;

  constructor(
    private readonly stream: LocalStream,
    private readonly onTag: (tag: FlvTag) => void,
    private readonly onEnd: (reason: string) => void,
  ) {}

  start(): void {
    this.close = this.stream.open(
      (tag) => {
        if (this.ended) return;
        // Called by the ingest server as the publisher's message arrives: a failure here ends
        // this reader, never the publisher's connection.
        try {
          this.onTag(tag);
        } catch (error) {
          this.end(`relay error: ${(error as Error).message}`);
        }
      },
      (reason) => this.end(reason),
    );
  }

  /** Stops reading; `onEnd` is not called for a reader stopped this way. */
  stop(): void {
    this.ended = true;
    this.close?.();
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.close?.();
    this.onEnd(reason);
  }
}
