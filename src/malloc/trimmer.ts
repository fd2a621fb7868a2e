import type { MallocTrimAddon } from './addon.js';

/**
 * glibc's default mmap threshold: blocks from 128 KiB up get their own mapping, unmapped when freed,
 * and the arenas give their top back past that much.
 */
const PINNED_THRESHOLD_BYTES = 128 << 10;

/**
 * Keeps glibc's malloc arenas near what is in use (docs/performance.md#memory): its thresholds
 * pinned at their defaults, and the free pages of the arenas given back every `intervalMs`.
 *
 * Why: answers' Buffers are malloc'd outside V8's heap and freed when a garbage collection finds
 * them dead, interleaved with longer-lived blocks. glibc returns memory to the kernel only from
 * the top of an arena, and once a block over its mmap threshold is freed it raises that threshold
 * (so ~200 KB answers came from the arena) and the trim threshold to twice that. Under a varied
 * query load the main arena stayed at its high-water mark with half of it free (gdb,
 * `malloc_stats()`: 21.3 MB of arena, 10.7 MB in use), and each thread arena of V8's helpers kept
 * 1.6–2.7 MB with under 40 KB in use. `malloc_trim(0)` releases the free pages in the middle of
 * the arenas; the pinned thresholds keep large blocks out of them and their tops short. A call
 * walks the arenas' free lists (0.2 ms idle, under 1 ms under that load on this VM); pages used
 * again cost a page fault each.
 */
export class MallocTrimmer {
  private readonly addon: MallocTrimAddon;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private calls = 0;

  /** `intervalMs`: time between trims (ms). */
  constructor(addon: MallocTrimAddon, intervalMs: number) {
    this.addon = addon;
    this.intervalMs = intervalMs;
  }

  /** Pins the thresholds and starts the trims; the timer does not keep the process alive. Once only. */
  start(): void {
    if (this.timer !== undefined) return;
    this.addon.pinThresholds(PINNED_THRESHOLD_BYTES);
    this.timer = setInterval(() => {
      this.calls++;
      this.addon.trim();
    }, this.intervalMs);
    this.timer.unref();
  }
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Calls made so far (for tests). */
  get callCount(): number {
    return this.calls;
  }
}
