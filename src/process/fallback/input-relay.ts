import type { Writable } from 'node:stream';
import type { SpawnFn } from '../supervise/index.js';
import { FallbackSwitch, type LiveSource, type SwitchSettings } from './fallback-switch.js';
import { Feeder } from './feeder.js';
import { fallbackFeederArgs, primaryFeederArgs } from './feeder-args.js';
import { encodeFlvTag, FLV_HEADER, type FlvTag } from './flv.js';
import { LocalFeeder, type LocalStream } from './local-stream.js';
import { DEFAULT_SHAPE } from './stream-shape.js';

export interface InputRelayOptions {
  inputId: string;
  primary: { address: string; options: readonly string[] };
  /** The primary when it is one of the server's own streams: read in the server, without a feeder. */
  localPrimary?: LocalStream;
  fallback: { address: string; options: readonly string[] };
  settings: SwitchSettings;
  binary: string;
  cwd: string;
  /** The encoders' spawn: feeders run in their sandbox. */
  spawn: SpawnFn;
  /** Monotonic milliseconds. */
  now: () => number;
  onSwitch: (to: LiveSource, reason: string) => void;
  /** A feeder ended on its own (its source failed), with its last error line. */
  onFeederEnd: (source: LiveSource, reason: string) => void;
}

/** How often the switch looks at its clock: well inside the 2 s a switch may take. */
const CHECK_EVERY_MS = 100;
/** A primary feeder that ended is started again after this long. */
const PRIMARY_RETRY_MS = 1000;
/** A fallback feeder that ended while it is live is started again after this long. */
const FALLBACK_RETRY_MS = 1000;
/**
 * A primary feeder that has delivered nothing this long since it started is replaced: one that hangs
 * on a source that will never answer (a connection to a host that dropped off) would otherwise keep
 * the primary from ever coming back.
 */
const FIRST_DATA_TIMEOUT_MS = 10_000;
/** More unread bytes than this in the encoder's pipe: the relay drops tags until the next keyframe. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;

/**
 * One input with a fallback (docs/processes.md#fallback-sources): the encoder reads FLV from a pipe
 * the relay writes; a feeder ffmpeg reads the primary and hands its packets on unchanged, another
 * encodes the fallback while it is live; `FallbackSwitch` picks and joins them on one timeline.
 */
export class InputRelay {
  private stream: Writable | undefined;
  private primary: Feeder | LocalFeeder | undefined;
  private fallback: Feeder | undefined;
  private readonly switch: FallbackSwitch;
  private checkTimer: NodeJS.Timeout | undefined;
  /** When the current primary feeder started, while it has delivered nothing. */
  private primaryWaitingSince: number | undefined;
  private retryTimers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private fallbackShape = DEFAULT_SHAPE;
  /** Sources whose failure was logged since they last delivered: a primary that is down is retried every second. */
  private readonly quiet = new Set<LiveSource>();

  constructor(private readonly options: InputRelayOptions) {
    this.switch = new FallbackSwitch(options.settings, {
      now: options.now,
      write: (tag) => this.write(tag),
      startFallback: (shape) => {
        this.fallbackShape = shape ?? DEFAULT_SHAPE;
        this.startFallback();
      },
      stopFallback: () => {
        this.fallback?.stop();
        this.fallback = undefined;
      },
      restartPrimary: () => {
        this.primary?.stop();
        this.startPrimary();
      },
      onSwitch: options.onSwitch,
    });
  }

  get live(): LiveSource {
    return this.switch.live;
  }

  /** Starts relaying into `stream`, the encoder's end of the pipe. */
  attach(stream: Writable): void {
    this.stream = stream;
    stream.write(FLV_HEADER);
    stream.once('close', () => this.stop());
    this.startPrimary();
    this.checkTimer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.checkTimer.unref();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.checkTimer);
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.primary?.stop();
    this.fallback?.stop();
  }

  private check(): void {
    this.switch.check();
    const waiting = this.primaryWaitingSince;
    if (waiting !== undefined && this.options.now() - waiting >= FIRST_DATA_TIMEOUT_MS) {
      this.primary?.stop();
      this.primary = undefined;
      this.startPrimary();
    }
  }

  private startPrimary(): void {
    if (this.stopped) return;
    const { primary, localPrimary } = this.options;
    const onTag = (tag: FlvTag): void => {
      this.quiet.delete('primary');
      this.primaryWaitingSince = undefined;
      this.switch.onPrimaryTag(tag);
    };
    const onEnd = (reason: string): void => {
      if (this.primary !== feeder) return;
      this.primary = undefined;
      this.primaryWaitingSince = undefined;
      this.feederEnded('primary', reason);
      this.switch.onPrimaryEnded();
      this.later(PRIMARY_RETRY_MS, () => {
        if (this.primary === undefined) this.startPrimary();
      });
    };
    const feeder =
      localPrimary === undefined
        ? this.feeder(primaryFeederArgs(primary.address, primary.options), { onTag, onEnd })
        : new LocalFeeder(localPrimary, onTag, onEnd);
    this.primary = feeder;
    this.primaryWaitingSince = this.options.now();
    feeder.start();
  }

  private startFallback(): void {
    if (this.stopped || this.fallback !== undefined) return;
    const { fallback } = this.options;
    const feeder: Feeder = this.feeder(
      fallbackFeederArgs(fallback.address, fallback.options, this.fallbackShape),
      {
        onTag: (tag) => {
          this.quiet.delete('fallback');
          this.switch.onFallbackTag(tag);
        },
        onEnd: (reason) => {
          if (this.fallback !== feeder) return;
          this.fallback = undefined;
          this.feederEnded('fallback', reason);
          this.later(FALLBACK_RETRY_MS, () => {
            if (this.switch.live === 'fallback') this.startFallback();
          });
        },
      },
    );
    this.fallback = feeder;
    feeder.start();
  }

  private feederEnded(source: LiveSource, reason: string): void {
    if (this.quiet.has(source)) return;
    this.quiet.add(source);
    this.options.onFeederEnd(source, reason);
  }

  private feeder(
    args: string[],
    handlers: { onTag: (tag: FlvTag) => void; onEnd: (reason: string) => void },
  ): Feeder {
    const { binary, cwd, spawn } = this.options;
    return new Feeder({ binary, cwd, spawn, args, ...handlers });
  }

  private write(tag: FlvTag): void {
    const stream = this.stream;
    if (stream === undefined || this.stopped || stream.destroyed) return;
    // An encoder that stopped reading must not make the server hold an unbounded backlog.
    if (stream.writableLength > MAX_BACKLOG_BYTES) return;
    stream.write(encodeFlvTag(tag));
  }

  private later(ms: number, action: () => void): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      action();
    }, ms);
    timer.unref();
    this.retryTimers.add(timer);
  }
}
