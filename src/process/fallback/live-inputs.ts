import type { ProcessInput } from '../config/index.js';
import type { LiveSource } from './fallback-switch.js';

/**
 * Which source feeds each input that has a fallback, and how often each side took over since the
 * process was created: the state's `input_live` and the `restream_input_*` metrics
 * (docs/processes.md#fallback-sources).
 */
export class LiveInputs {
  private readonly live = new Map<string, LiveSource>();
  private readonly switches = new Map<string, Record<LiveSource, number>>();
  private viewCache: Readonly<Record<string, LiveSource>> | undefined;

  constructor(inputs: readonly ProcessInput[]) {
    for (const input of inputs) {
      if (input.fallback === undefined) continue;
      this.live.set(input.id, 'primary');
      this.switches.set(input.id, { primary: 0, fallback: 0 });
    }
  }

  get empty(): boolean {
    return this.live.size === 0;
  }

  set(inputId: string, to: LiveSource): void {
    if (!this.live.has(inputId) || this.live.get(inputId) === to) return;
    this.live.set(inputId, to);
    const counts = this.switches.get(inputId);
    if (counts !== undefined) counts[to]++;
    this.viewCache = undefined;
  }

  /** Every input back on its primary (the run ended: the next one starts there). */
  reset(): void {
    for (const id of this.live.keys()) this.live.set(id, 'primary');
    this.viewCache = undefined;
  }

  /** `{ "<input id>": "primary" | "fallback" }`, the same object until a switch; undefined without fallbacks. */
  view(): Readonly<Record<string, LiveSource>> | undefined {
    if (this.live.size === 0) return undefined;
    this.viewCache ??= Object.fromEntries(this.live);
    return this.viewCache;
  }

  /** Per input: whether the fallback is live (1) or not (0), and the switches to each side. */
  *series(): Generator<{ inputId: string; fallbackLive: number; switches: Record<LiveSource, number> }> {
    for (const [inputId, live] of this.live) {
      const switches = this.switches.get(inputId) ?? { primary: 0, fallback: 0 };
      yield { inputId, fallbackLive: live === 'fallback' ? 1 : 0, switches };
    }
  }
}
