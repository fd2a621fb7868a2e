import type { RE2JS } from 're2js';

/**
 * Answers kept per pattern. Label values repeat from query to query (interface names, mount
 * points, process ids), so a few hundred cover a host; a pattern that meets more starts over.
 * With the pattern cache's 1 024 patterns this bounds the answers at 256 Ki entries (a few MiB,
 * the values themselves being the store's strings).
 */
const MAX_KEPT_ANSWERS = 256;

/**
 * A compiled RE2 label pattern that remembers whether each label value matched. re2js runs its
 * automaton in JavaScript; matching it against every series of every selected metric was the
 * largest item of a varied latest-value query after parsing its body (docs/performance.md#queries-that-vary). A value's answer never changes, so a kept one is always right.
 */
export class LabelPattern {
  private readonly regexp: RE2JS;
  private readonly answers = new Map<string, boolean>();

  constructor(regexp: RE2JS) {
    this.regexp = regexp;
  }

  /** Does the pattern match somewhere in `value` (unanchored, as docs/metrics.md#post-apiv3metrics-the-query asks)? */
  test(value: string): boolean {
    let answer = this.answers.get(value);
    if (answer === undefined) {
      answer = this.regexp.test(value);
      if (this.answers.size >= MAX_KEPT_ANSWERS) this.answers.clear();
      this.answers.set(value, answer);
    }
    return answer;
  }
}
