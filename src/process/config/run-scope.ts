/**
 * A credential that one encoder run may use and that ends with the run: its memfs write
 * credential, its ingest tokens.
 */
export interface RunCredential {
  /** Every form in which the run's command line or ffmpeg's output may show it: masked. */
  readonly secrets: readonly string[];
  /** Ends the credential at once. Idempotent. */
  revoke(): void;
}

/**
 * The encoder run a config is resolved for (docs/security.md#no-secret-where-others-can-read-it).
 * A placeholder template that would otherwise write a server-wide secret into the command line
 * (`{rtmp}`'s `rtmp.token`) asks for a credential of the run's own instead, which every local user
 * may read in `/proc/<pid>/cmdline` without learning anything that outlives the run.
 */
export interface RunScope {
  /**
   * The run's credential from `issuer`: issued by `issue` at the first call for that issuer, the
   * same one after, revoked when the run ends.
   */
  credential<T extends RunCredential>(issuer: object, issue: () => T): T;
}
