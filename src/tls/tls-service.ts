import { readFile } from 'node:fs/promises';
import type { Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { resolveListenAddress, type Config } from '../config/index.js';
import { loopbackBaseUrl, probeListen } from '../http/index.js';
import { NOTHING_TO_BUILD, type ReloadStep } from '../lifecycle/index.js';
import { createAcmeTransport, type AcmeTransport } from './acme/acme-transport.js';
import { AcmeStore } from './acme/acme-store.js';
import { AutoCertificate } from './auto-certificate.js';
import { ChallengeResponder } from './acme/challenge-responder.js';
import type { TlsStatusView } from './contract.js';
import { HttpsListener } from './https-listener.js';
import { OwnCertificate, readOwnCertificate } from './own-certificate.js';
import { chainIsPubliclyTrusted } from './public-trust.js';
import { ServedCertificate } from './served-certificate.js';
import { TlsStatusBoard } from './tls-status.js';

/** HSTS for a year, this host only (the operator's other hosts are not ours to pin). */
const HSTS = 'max-age=31536000';
const ACME_TIMEOUT_MS = 30_000;

/**
 * The keys HTTPS and the certificate are built from. `rtmp.enable` and `rtmp.enable_tls` decide
 * whether RTMPS needs the certificate; `host.name` the names of an automatic one.
 */
const RELOAD_KEYS = [
  'tls.enable',
  'tls.auto',
  'tls.email',
  'tls.address',
  'tls.acme.directory_url',
  'tls.acme.ca_file',
  'tls.cert_file',
  'tls.key_file',
  'rtmp.enable',
  'rtmp.enable_tls',
  'host.name',
  // Decides the bind host of a `tls.address` without a host (loopback while it is off).
  'api.auth.enable',
];

/** Where HTTPS binds under `config` (`:port` narrows to loopback while authentication is off). */
function httpsBindHost(config: Config): string | undefined {
  return resolveListenAddress(config.tls.address, config.api.auth.enable)?.host;
}

/** Whether a TLS listener (HTTPS, RTMPS) serves the certificate under `config`. */
function needsCertificate(config: Config): boolean {
  return config.tls.enable || (config.rtmp.enable && config.rtmp.enable_tls);
}

export interface TlsDeps {
  logger: Logger;
  now: () => number;
  /** Time between two looks at tls.cert_file / tls.key_file, ms (default 10 s). */
  certificatePollMs?: number;
  /** Roots a chain must lead to for HSTS (default node's bundled Mozilla roots). */
  publicRoots?: readonly string[];
}

/** What runs for one configuration: torn down and built again when the configuration changes. */
interface Running {
  listener: HttpsListener | undefined;
  own: OwnCertificate | undefined;
  auto: AutoCertificate | undefined;
  url: string | undefined;
}

/**
 * HTTPS, and the certificate it shares with RTMPS (docs/tls.md). `register` installs, once, what
 * the HTTP server needs whatever the configuration (the ACME challenge route, the HSTS hook);
 * `open` builds the listener and the certificate source from a configuration, at start and again
 * at a reload, replacing what ran before; RTMPS keeps its listener and gets each new certificate.
 */
export class TlsService {
  /** The certificate every TLS listener serves (RTMPS subscribes to it too). */
  readonly certificate = new ServedCertificate();
  private readonly responder = new ChallengeResponder();
  private board: TlsStatusBoard;
  private running: Running = { listener: undefined, own: undefined, auto: undefined, url: undefined };
  private hsts = false;

  constructor(private readonly deps: TlsDeps) {
    this.board = new TlsStatusBoard(false, deps.now);
    const roots = deps.publicRoots ?? rootCertificates;
    this.certificate.subscribe(({ cert }) => {
      this.hsts = chainIsPubliclyTrusted(String(cert), roots, deps.now());
    });
  }

  /** The status answered beside the configuration (`GET /api/v3/config`, field `tls`). */
  status(): TlsStatusView {
    return this.board.current();
  }

  /** The HTTPS base URL (`https://127.0.0.1:8181`) while HTTPS listens. */
  get url(): string | undefined {
    return this.running.url;
  }

  register(server: FastifyInstance): void {
    this.responder.register(server);
    server.addHook('onRequest', (request, reply, done) => {
      if (this.hsts && 'encrypted' in request.raw.socket)
        void reply.header('strict-transport-security', HSTS);
      done();
    });
  }

  /**
   * Builds HTTPS from `config` for the HTTP server `http` (after what ran before is closed). Own
   * certificate files that cannot be used, a CA file that cannot be read, or an address that
   * cannot be bound throw, naming the key. An automatic certificate is ordered in the background.
   */
  async open(config: Config, http: HttpServer): Promise<void> {
    this.close();
    const { tls } = config;
    this.board = new TlsStatusBoard(needsCertificate(config), this.deps.now);
    if (!needsCertificate(config)) return;
    const running: Running = { listener: undefined, own: undefined, auto: undefined, url: undefined };
    this.running = running;
    if (tls.enable && tls.auto) {
      running.auto = new AutoCertificate({
        names: config.host.name,
        email: tls.email,
        directoryUrl: tls.acme.directory_url,
        store: new AcmeStore(join(config.db.dir, 'cert')),
        transport: await this.acmeTransport(tls.acme.ca_file),
        http01: this.responder,
        served: this.certificate,
        status: this.board,
        logger: this.deps.logger,
        now: this.deps.now,
      });
    } else {
      running.own = new OwnCertificate({
        certFile: tls.cert_file,
        keyFile: tls.key_file,
        pollIntervalMs: this.deps.certificatePollMs ?? 10_000,
        logger: this.deps.logger,
        served: this.certificate,
        status: this.board,
      });
      await running.own.load();
      running.own.watch();
    }
    if (tls.enable) {
      const bind = resolveListenAddress(tls.address, config.api.auth.enable);
      if (bind === undefined) throw new Error(`tls.address: invalid address "${tls.address}"`);
      try {
        const { listener, address } = await HttpsListener.open(http, this.certificate, bind);
        running.listener = listener;
        running.url = loopbackBaseUrl(address).replace(/^http:/, 'https:');
      } catch (error) {
        this.close();
        throw new Error(`tls.address: cannot listen on "${tls.address}": ${(error as Error).message}`, {
          cause: error,
        });
      }
      this.deps.logger.info({ address: tls.address, url: running.url }, 'https listening');
    }
    await running.auto?.start();
  }

  /**
   * The reload step (docs/tls.md#reload): HTTPS and the certificate source are built again from
   * the new configuration when a key they are made of changed (a new `host.name` only with
   * `tls.auto`: a certificate for the new names is ordered). What can fail is tried in `prepare`
   * (own certificate files, the CA file, the new address), so a reload that cannot serve HTTPS
   * changes nothing; `running` is the configuration HTTPS was built from (the app's, updated in
   * place by the reload).
   */
  reloadStep(running: Config, http: HttpServer): ReloadStep<Config> {
    return {
      name: 'tls',
      keys: RELOAD_KEYS,
      prepare: async (next, changed) => {
        const rebuild =
          changed.some((key) => key.startsWith('tls.')) ||
          (changed.includes('host.name') && next.tls.auto) ||
          (next.tls.enable && httpsBindHost(next) !== httpsBindHost(running)) ||
          needsCertificate(next) !== needsCertificate(running);
        if (!rebuild) return NOTHING_TO_BUILD;
        await this.check(next);
        return {
          commit: () =>
            this.open(next, http).catch((error: unknown) => {
              // Only what changed between the check and now (a port taken meanwhile) ends here.
              this.deps.logger.error(
                { err: error },
                `tls: not serving HTTPS after the reload: ${(error as Error).message}`,
              );
            }),
          abort: () => undefined,
        };
      },
    };
  }

  /** Tries what `open` would fail on for `config`, without touching what runs; throws naming the key. */
  private async check(config: Config): Promise<void> {
    if (!needsCertificate(config)) return;
    const { tls } = config;
    if (tls.enable && tls.auto) await this.acmeTransport(tls.acme.ca_file);
    else await readOwnCertificate(tls.cert_file, tls.key_file);
    if (!tls.enable) return;
    const bind = resolveListenAddress(tls.address, config.api.auth.enable);
    if (bind === undefined) throw new Error(`tls.address: invalid address "${tls.address}"`);
    // The port HTTPS holds now is free once it lets go of it.
    if (bind.port !== 0 && bind.port === this.running.listener?.address.port) return;
    await probeListen('tls.address', tls.address, bind);
  }

  /** Orders a new automatic certificate now (tools and tests; the timer does it at two thirds). */
  async renewCertificate(): Promise<void> {
    if (this.running.auto === undefined) throw new Error('tls.auto is not on');
    await this.running.auto.renew();
  }

  /** Stops the listener and the certificate source (open connections stay with the HTTP server). */
  close(): void {
    const { listener, own, auto } = this.running;
    listener?.close();
    own?.stop();
    auto?.stop();
    this.running = { listener: undefined, own: undefined, auto: undefined, url: undefined };
  }

  private async acmeTransport(caFile: string): Promise<AcmeTransport> {
    if (caFile === '') return createAcmeTransport({ timeoutMs: ACME_TIMEOUT_MS });
    try {
      return createAcmeTransport({ ca: await readFile(caFile), timeoutMs: ACME_TIMEOUT_MS });
    } catch (error) {
      throw new Error(`tls.acme.ca_file: cannot read "${caFile}": ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
