import type { Page } from 'playwright-core';

interface Entry {
  step: string;
  kind: 'blocked' | 'failed' | 'status' | 'console' | 'pageerror';
  text: string;
}

/**
 * Records, per step of the walk, what a user would not see but a tester must: requests that
 * failed, answers with a status >= 400, console errors and uncaught page errors. Requests to an
 * origin outside `allowed` are aborted (the machine is offline) and listed as blocked.
 */
export class Recorder {
  private readonly entries: Entry[] = [];
  private step = '';

  constructor(page: Page, allowed: string[]) {
    void page.route('**/*', (route) => {
      const url = route.request().url();
      if (
        allowed.some((origin) => url.startsWith(`${origin}/`) || url === origin) ||
        url.startsWith('data:')
      ) {
        return route.continue();
      }
      this.add('blocked', `${route.request().method()} ${url}`);
      return route.abort('blockedbyclient');
    });
    page.on('requestfailed', (request) => {
      const reason = request.failure()?.errorText ?? '';
      if (reason.includes('ERR_BLOCKED_BY_CLIENT')) return;
      this.add('failed', `${request.method()} ${request.url()}: ${reason}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) {
        this.add('status', `${response.request().method()} ${response.url()} -> ${response.status()}`);
      }
    });
    page.on('console', (message) => {
      if (message.type() === 'error') this.add('console', message.text());
    });
    page.on('pageerror', (error) => this.add('pageerror', error.message));
  }

  startStep(name: string): void {
    this.step = name;
  }

  /** Entries of the current step whose text matches `pattern`. */
  seen(kind: Entry['kind'], pattern: RegExp): string[] {
    return this.entries.filter((e) => e.kind === kind && pattern.test(e.text)).map((e) => e.text);
  }

  /**
   * What breaks a screen: failed requests, server errors, uncaught exceptions. Not counted: requests
   * a navigation cut off (ERR_ABORTED) and images the browser refused to show because the answer
   * was a JSON 404 envelope (ERR_BLOCKED_BY_ORB: the snapshot before its first picture).
   */
  problemCount(): number {
    return this.entries.filter(
      (e) =>
        (e.kind === 'failed' && !/ERR_ABORTED|ERR_BLOCKED_BY_ORB/.test(e.text)) ||
        e.kind === 'pageerror' ||
        (e.kind === 'status' && / -> 5\d\d$/.test(e.text)),
    ).length;
  }

  report(): string {
    if (this.entries.length === 0) return '\nno failed requests, error statuses or console errors\n';
    const lines = this.entries.map((e) => `  [${e.step}] ${e.kind}: ${e.text}`);
    return `\n${this.entries.length} recorded (problems: ${this.problemCount()}):\n${lines.join('\n')}\n`;
  }

  private add(kind: Entry['kind'], text: string): void {
    this.entries.push({ step: this.step, kind, text: text.length > 400 ? `${text.slice(0, 400)}…` : text });
  }
}
