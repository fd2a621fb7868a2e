import { TAG_AUDIO, TAG_VIDEO, tagRole, type FlvTag } from './flv.js';
import { readStreamShape, type StreamShape } from './stream-shape.js';
import { Timeline } from './timeline.js';

export type LiveSource = 'primary' | 'fallback';

export interface SwitchSettings {
  /** Without a tag from the primary this long, it counts as lost. */
  timeoutMs: number;
  /** The primary must deliver without a gap this long before it is live again. */
  returnAfterMs: number;
  /** Two switch-backs are at least this far apart (a flapping primary). */
  switchBackIntervalMs: number;
}

/**
 * Added to the first timeout of a run: a feeder probes its source (about a second with ffmpeg's
 * defaults) before it delivers anything, and a process should not start on its fallback for that.
 */
export const START_GRACE_MS = 2000;

export interface SwitchActions {
  /** Monotonic milliseconds. */
  now: () => number;
  /** Tags for the encoder, on one timeline. */
  write: (tag: FlvTag) => void;
  /** Starts the fallback's feeder, encoding to `shape`. */
  startFallback: (shape: StreamShape | undefined) => void;
  stopFallback: () => void;
  /** Ends a primary feeder that stalled; its owner starts a fresh one. */
  restartPrimary: () => void;
  onSwitch: (to: LiveSource, reason: string) => void;
}

/** The codec parameters a source sent last, sent again whenever the encoder joins it. */
interface SourceHeaders {
  audio?: FlvTag;
  video?: FlvTag;
  hasVideo: boolean;
}

/**
 * Decides which source feeds the encoder (docs/processes.md#fallback-sources): the primary while
 * it delivers, the fallback from `timeoutMs` after its last tag (or at once when its feeder
 * ends), the primary again once it has delivered without a gap for `returnAfterMs`, at its next
 * keyframe, and never sooner than `switchBackIntervalMs` after the previous switch-back. The
 * encoder joins a source at a keyframe, after that source's sequence headers. `check()` runs
 * the clock-driven decisions; its owner calls it a few times per second.
 */
export class FallbackSwitch {
  private current: LiveSource = 'primary';
  /** Waiting for the live source's keyframe: nothing is written until then. */
  private joining = true;
  private readonly timeline = new Timeline();
  private readonly headers: Record<LiveSource, SourceHeaders> = {
    primary: { hasVideo: false },
    fallback: { hasVideo: false },
  };
  private primaryShape: StreamShape | undefined;
  private lastPrimaryTagAt: number;
  /** Since when the primary has delivered without a gap; undefined while it does not. */
  private primaryStableSince: number | undefined;
  private lastSwitchBackAt = Number.NEGATIVE_INFINITY;
  private returning = false;

  constructor(
    private readonly settings: SwitchSettings,
    private readonly actions: SwitchActions,
  ) {
    // A primary that delivers nothing from the start counts as lost after the timeout too.
    this.lastPrimaryTagAt = actions.now() + START_GRACE_MS;
  }

  get live(): LiveSource {
    return this.current;
  }

  onPrimaryTag(tag: FlvTag): void {
    const now = this.actions.now();
    const role = tagRole(tag);
    if (role === 'metadata') {
      this.primaryShape = readStreamShape(tag.body) ?? this.primaryShape;
      return;
    }
    // Only media counts as delivering: a reader that joins a stalled stream gets its headers again.
    if (role !== 'sequence-header') {
      if (this.primaryStableSince === undefined || now - this.lastPrimaryTagAt >= this.settings.timeoutMs)
        this.primaryStableSince = now;
      this.lastPrimaryTagAt = now;
    }
    if (this.current === 'fallback' && this.returning && this.joinsAt('primary', tag)) {
      this.returning = false;
      this.lastSwitchBackAt = now;
      this.current = 'primary';
      this.joining = true;
      this.actions.stopFallback();
      this.actions.onSwitch(
        'primary',
        `primary stable for ${seconds(now - (this.primaryStableSince ?? now))}`,
      );
    }
    this.take('primary', tag);
  }

  onFallbackTag(tag: FlvTag): void {
    if (tagRole(tag) === 'metadata') return;
    this.take('fallback', tag);
  }

  /** The primary's feeder ended (the source closed, or it could not be read). */
  onPrimaryEnded(): void {
    this.primaryStableSince = undefined;
    this.returning = false;
    if (this.current === 'primary') this.switchOver('primary ended');
  }

  /** Clock-driven decisions: a stalled primary, and a primary stable long enough to return to. */
  check(): void {
    const now = this.actions.now();
    const silentMs = now - this.lastPrimaryTagAt;
    if (silentMs >= this.settings.timeoutMs) {
      if (this.current === 'primary') this.switchOver(`no data from the primary for ${seconds(silentMs)}`);
      // A feeder that delivered and went silent may hang on its source for long: a fresh one
      // finds out sooner whether the primary is back. One still connecting is left alone.
      if (this.primaryStableSince !== undefined) {
        this.primaryStableSince = undefined;
        this.returning = false;
        this.actions.restartPrimary();
      }
      return;
    }
    if (
      this.current === 'fallback' &&
      !this.returning &&
      this.primaryStableSince !== undefined &&
      now - this.primaryStableSince >= this.settings.returnAfterMs &&
      now - this.lastSwitchBackAt >= this.settings.switchBackIntervalMs
    ) {
      this.returning = true;
    }
  }

  private switchOver(reason: string): void {
    this.current = 'fallback';
    this.joining = true;
    this.returning = false;
    this.headers.fallback = { hasVideo: false };
    this.actions.startFallback(this.primaryShape);
    this.actions.onSwitch('fallback', reason);
  }

  /** A tag of `source`: kept when it carries codec parameters, written when `source` is live. */
  private take(source: LiveSource, tag: FlvTag): void {
    const headers = this.headers[source];
    if (tag.type === TAG_VIDEO) headers.hasVideo = true;
    const role = tagRole(tag);
    if (role === 'sequence-header') {
      if (tag.type === TAG_AUDIO) headers.audio = tag;
      else headers.video = tag;
    }
    if (source !== this.current) return;
    if (this.joining) {
      if (!this.joinsAt(source, tag)) return;
      this.joining = false;
      this.timeline.begin(tag.timestamp);
      for (const header of [headers.video, headers.audio]) {
        if (header !== undefined && header !== tag)
          this.actions.write(this.timeline.place({ ...header, timestamp: tag.timestamp }));
      }
    }
    this.actions.write(this.timeline.place(tag));
  }

  /** Whether the encoder can start on `source` at `tag`: a keyframe, or any audio of a source without video. */
  private joinsAt(source: LiveSource, tag: FlvTag): boolean {
    const role = tagRole(tag);
    if (role === 'keyframe') return true;
    return !this.headers[source].hasVideo && tag.type === TAG_AUDIO && role === 'frame';
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
