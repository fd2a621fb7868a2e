import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { checkCertificatePair, type CertificatePair } from './certificate.js';
import type { ServedCertificate } from './served-certificate.js';
import type { TlsStatusBoard } from './tls-status.js';
import { AcmeClient, type Http01Publisher } from './acme/acme-client.js';
import { AcmeProblem } from './acme/acme-problem.js';
import type { AcmeStore } from './acme/acme-store.js';
import type { AcmeTransport } from './acme/acme-transport.js';
import { newEcKey } from './acme/acme-store.js';

export interface AutoCertificateOptions {
  /** `host.name`: the certificate is for all of them. */
  names: readonly string[];
  email: string;
  directoryUrl: string;
  store: AcmeStore;
  transport: AcmeTransport;
  http01: Http01Publisher;
  served: ServedCertificate;
  status: TlsStatusBoard;
  logger: Logger;
  now: () => number;
}

/**
 * Waits after consecutive failures, ms: soon after the first (a port forward fixed), then less
 * and less often, so that a name that keeps failing stays under Let's Encrypt's limit of five
 * failed validations per name and hour; a Retry-After of the CA is waited out in any case.
 */
const BACK_OFF_MS = [60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000, 3 * 60 * 60_000, 6 * 60 * 60_000];
/** The longest single timer: longer waits are taken in steps (node's timers overflow past 24.8 days). */
const MAX_TIMER_MS = 60 * 60_000;
/** How long one authorization or order may stay pending at the CA. */
const POLL_LIMIT_MS = 120_000;

/**
 * `tls.auto`: a certificate for every `host.name` from an ACME CA (HTTP-01 on the plain
 * listener), stored under `<db.dir>/cert`, renewed at two thirds of its lifetime and swapped into
 * the listeners without dropping a connection. A failure is one log line naming the name and the
 * reason, and the `error` of the TLS status; the server keeps serving HTTP (and the previous
 * certificate, if one) and tries again after the back-off. No certificate is ever made up.
 */
export class AutoCertificate {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private failures = 0;
  private stopped = false;
  private client: AcmeClient | undefined;

  constructor(private readonly options: AutoCertificateOptions) {}

  /** Serves the stored certificate if it is for these names, and plans the next order. */
  async start(): Promise<void> {
    const stored = await this.storedPair();
    if (stored !== undefined) {
      this.serve(stored);
      this.planAt(this.renewAt(stored));
    } else {
      this.planAt(this.options.now());
    }
  }

  /** Orders a certificate now (single-flight): what the renewal timer does, for tools and tests. */
  renew(): Promise<void> {
    this.running ??= this.order().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async order(): Promise<void> {
    const { names, logger } = this.options;
    const misconfigured = this.namesProblem();
    if (misconfigured !== undefined) {
      // Nothing to retry until the configuration changes (a reload builds this anew).
      this.options.status.failed(misconfigured);
      logger.error(
        { name: misconfigured.name ?? null, reason: misconfigured.reason },
        `tls.auto: no certificate${misconfigured.name === undefined ? '' : ` for ${misconfigured.name}`}: ${misconfigured.reason}`,
      );
      return;
    }
    try {
      const client = await this.acmeClient();
      const key = newEcKey();
      const chain = await client.obtain(names, key, this.options.http01);
      const keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
      const pair = checkCertificatePair(Buffer.from(chain), Buffer.from(keyPem));
      await this.options.store.saveCertificate(chain, keyPem);
      this.failures = 0;
      this.serve(pair);
      logger.info(
        {
          names,
          notAfter: new Date(pair.notAfterMs).toISOString(),
          renewAt: new Date(this.renewAt(pair)).toISOString(),
        },
        'tls.auto: certificate obtained and served',
      );
      this.planAt(this.renewAt(pair));
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    const problem =
      error instanceof AcmeProblem
        ? error
        : new AcmeProblem('streamcore:error', (error as Error).message, undefined, undefined);
    const backOff = BACK_OFF_MS[Math.min(this.failures, BACK_OFF_MS.length - 1)] ?? 0;
    this.failures += 1;
    const retryAtMs = this.options.now() + Math.max(backOff, problem.retryAfterMs ?? 0);
    const name = problem.hostName ?? this.options.names.join(', ');
    const reason = `${problem.detail} (${problem.kind})`;
    this.options.status.failed({ name, reason, retryAtMs });
    this.options.logger.error(
      { name, reason, type: problem.type, retryAt: new Date(retryAtMs).toISOString() },
      `tls.auto: no certificate for ${name}: ${reason}; HTTP keeps serving, next attempt at ${new Date(retryAtMs).toISOString()}`,
    );
    this.planAt(retryAtMs);
  }

  /** Names a CA cannot issue for; what the CA itself checks (DNS, reachability) is left to it. */
  private namesProblem(): { name?: string; reason: string } | undefined {
    if (this.options.names.length === 0) {
      return { reason: 'host.name is empty: set it to the public DNS name(s) of this server' };
    }
    const ip = this.options.names.find((name) => isIP(name) !== 0);
    if (ip !== undefined) {
      return {
        name: ip,
        reason:
          'host.name holds an IP address: certificates are issued for DNS names; set host.name to a DNS name that resolves to this server',
      };
    }
    return undefined;
  }

  private async acmeClient(): Promise<AcmeClient> {
    if (this.client !== undefined) return this.client;
    const { store, directoryUrl } = this.options;
    const client = new AcmeClient({
      directoryUrl,
      accountKey: await store.accountKey(),
      accountUrl: await store.accountUrl(directoryUrl),
      email: this.options.email,
      transport: this.options.transport,
      now: this.options.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      pollLimitMs: POLL_LIMIT_MS,
    });
    const accountUrl = await client.account();
    await store.saveAccountUrl(directoryUrl, accountUrl);
    this.client = client;
    return client;
  }

  private async storedPair(): Promise<CertificatePair | undefined> {
    const stored = await this.options.store.certificate();
    if (stored === undefined) return undefined;
    try {
      const pair = checkCertificatePair(stored.cert, stored.key);
      const same =
        pair.names.length === this.options.names.length &&
        this.options.names.every((name) => pair.names.includes(name));
      return same && pair.notAfterMs > this.options.now() ? pair : undefined;
    } catch {
      return undefined;
    }
  }

  private serve(pair: CertificatePair): void {
    this.options.served.replace(pair);
    this.options.status.serving(pair, 'acme', this.renewAt(pair));
  }

  /** Two thirds into the certificate's lifetime. */
  private renewAt(pair: CertificatePair): number {
    return pair.notBeforeMs + ((pair.notAfterMs - pair.notBeforeMs) * 2) / 3;
  }

  private planAt(atMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const wait = Math.max(0, atMs - this.options.now());
    this.timer = setTimeout(
      () => {
        if (this.options.now() >= atMs) void this.renew();
        else this.planAt(atMs);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    this.timer.unref();
  }
}
