import { randomBytes } from 'node:crypto';
import { RtmpProtocolError } from './message.js';

const VERSION = 3;
const PACKET_BYTES = 1536;

/**
 * The server side of the simple RTMP handshake (RTMP specification 1.0, §5.2): C0+C1 in, S0+S1+S2
 * out, C2 in. S1 carries zero version bytes, which tells ffmpeg (libavformat/rtmpproto.c) and
 * librtmp-based encoders (OBS) not to expect the digest ("complex") handshake of Flash Player 9;
 * they only use that one for RTMPE or SWF verification, which this server does not offer.
 * It holds at most C0+C1 (1 537 bytes) or C2.
 */
export class ServerHandshake {
  private buffered: Buffer = Buffer.alloc(0);
  private stage: 'c0c1' | 'c2' | 'done' = 'c0c1';

  constructor(private readonly now: () => number) {}

  get done(): boolean {
    return this.stage === 'done';
  }

  /**
   * Takes bytes from the client; returns what to send back (if anything now) and, once the
   * handshake is complete, the bytes after it, which belong to the chunk stream.
   */
  push(data: Buffer): { reply?: Buffer; rest?: Buffer } {
    this.buffered = this.buffered.length === 0 ? data : Buffer.concat([this.buffered, data]);
    if (this.stage === 'c0c1') {
      if (this.buffered.length < 1 + PACKET_BYTES) return {};
      const version = this.buffered[0] as number;
      if (version !== VERSION)
        throw new RtmpProtocolError(`handshake version ${version} (only 3, plain RTMP)`);
      const c1 = this.buffered.subarray(1, 1 + PACKET_BYTES);
      this.buffered = this.buffered.subarray(1 + PACKET_BYTES);
      this.stage = 'c2';
      return { reply: this.replyTo(c1), ...this.afterC2() };
    }
    return this.afterC2();
  }

  private afterC2(): { rest?: Buffer } {
    if (this.stage !== 'c2' || this.buffered.length < PACKET_BYTES) return {};
    // C2 echoes S1; its content proves nothing to us, so it is not checked.
    const rest = Buffer.from(this.buffered.subarray(PACKET_BYTES));
    this.buffered = Buffer.alloc(0);
    this.stage = 'done';
    return { rest };
  }

  private replyTo(c1: Buffer): Buffer {
    const reply = Buffer.alloc(1 + 2 * PACKET_BYTES);
    reply[0] = VERSION;
    const time = (this.now() >>> 0) & 0xffffffff;
    // S1: our time, four zero bytes (no digest), random bytes.
    reply.writeUInt32BE(time, 1);
    randomBytes(PACKET_BYTES - 8).copy(reply, 9);
    // S2: the client's time and random bytes echoed, with the time we read C1 (§5.2.4).
    c1.copy(reply, 1 + PACKET_BYTES);
    reply.writeUInt32BE(time, 1 + PACKET_BYTES + 4);
    return reply;
  }
}
