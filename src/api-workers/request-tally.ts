import type { RequestCounter } from '../session/index.js';

/** Requests tallied before they are sent: one message per this many, or per `FLUSH_MS`. */
const MAX_BATCH = 256;
const FLUSH_MS = 200;

/**
 * The `http` session counter of an API worker: the requests it answered go to the main process's
 * collector in batches (`GET /api/v3/session` and the session metrics count them as before), so
 * the channel carries one message per many requests.
 */
export class RequestTally implements RequestCounter {
  private counted: [string, string, number, number][] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly send: (counted: [string, string, number, number][]) => void) {}

  requestStarted(): void {}

  requestEnded(): void {}

  countRequest(remote: string, route: string, rxBytes: number, txBytes: number): void {
    this.counted.push([remote, route, rxBytes, txBytes]);
    if (this.counted.length >= MAX_BATCH) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.counted.length === 0) return;
    const counted = this.counted;
    this.counted = [];
    this.send(counted);
  }
}
