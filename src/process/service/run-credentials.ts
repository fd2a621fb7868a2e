import type { RunCredential, RunScope } from '../config/index.js';

/**
 * The credentials one encoder run (or probe) was issued while its command line was made, by
 * issuer: what its reports mask, and what ends with it.
 */
export class RunCredentials implements RunScope {
  private readonly issued = new Map<object, RunCredential>();

  credential<T extends RunCredential>(issuer: object, issue: () => T): T {
    const held = this.issued.get(issuer);
    if (held !== undefined) return held as T;
    const fresh = issue();
    this.issued.set(issuer, fresh);
    return fresh;
  }

  /** The secrets the run's command line carries, in every form its reports must mask. */
  secrets(): string[] {
    return [...this.issued.values()].flatMap((credential) => credential.secrets);
  }

  /** Ends every credential of the run. */
  revoke(): void {
    for (const credential of this.issued.values()) credential.revoke();
  }
}
