import { readFile, stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import { checkCertificatePair, type CertificatePair } from './certificate.js';
import type { ServedCertificate } from './served-certificate.js';
import type { TlsStatusBoard } from './tls-status.js';

export interface OwnCertificateOptions {
  certFile: string;
  keyFile: string;
  /** Time between two looks at the files' modification times, ms. */
  pollIntervalMs: number;
  logger: Logger;
  served: ServedCertificate;
  status: TlsStatusBoard;
}

/**
 * `tls.cert_file` / `tls.key_file`: read and checked at start (a bad pair stops the start, naming
 * the keys), then watched: when either file changes (a renewal by certbot or a deploy script),
 * the pair is read again and served from the next handshake on. A pair that does not work
 * (half-written, key and certificate of different renewals) is logged and the last good one
 * stays served; the next change tries again.
 */
export class OwnCertificate {
  private timer: NodeJS.Timeout | undefined;
  private seen = '';
  private checking = false;

  constructor(private readonly options: OwnCertificateOptions) {}

  /** Reads the pair and serves it; throws, naming the keys, when it is unusable. */
  async load(): Promise<void> {
    const pair = await this.read();
    this.seen = await this.fingerprint();
    this.serve(pair);
  }

  /** Starts watching the files. */
  watch(): void {
    this.timer = setInterval(() => void this.checkForChange(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async checkForChange(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const fingerprint = await this.fingerprint().catch(() => this.seen);
      if (fingerprint === this.seen) return;
      this.seen = fingerprint;
      const pair = await this.read();
      this.serve(pair);
      this.options.logger.info(
        {
          certFile: this.options.certFile,
          names: pair.names,
          notAfter: new Date(pair.notAfterMs).toISOString(),
        },
        'tls: certificate files changed, serving the new certificate',
      );
    } catch (error) {
      const reason = (error as Error).message;
      this.options.status.failed({ reason });
      this.options.logger.error(
        { certFile: this.options.certFile, keyFile: this.options.keyFile, reason },
        `tls: certificate files changed but cannot be used, still serving the previous certificate: ${reason}`,
      );
    } finally {
      this.checking = false;
    }
  }

  private serve(pair: CertificatePair): void {
    this.options.served.replace(pair);
    this.options.status.serving(pair, 'file');
  }

  private async fingerprint(): Promise<string> {
    const [cert, key] = await Promise.all([stat(this.options.certFile), stat(this.options.keyFile)]);
    return `${cert.ino}:${cert.mtimeMs}:${cert.size}/${key.ino}:${key.mtimeMs}:${key.size}`;
  }

  private read(): Promise<CertificatePair> {
    return readOwnCertificate(this.options.certFile, this.options.keyFile);
  }
}

/** Reads and checks the pair of PEM files; throws, naming the keys, when it is unusable. */
export async function readOwnCertificate(certFile: string, keyFile: string): Promise<CertificatePair> {
  const read = async (key: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new Error(`${key}: cannot read "${file}": ${(error as Error).message}`, { cause: error });
    }
  };
  const cert = await read('tls.cert_file', certFile);
  const key = await read('tls.key_file', keyFile);
  try {
    return checkCertificatePair(cert, key);
  } catch (error) {
    throw new Error(
      `tls.cert_file, tls.key_file: not a usable certificate and key: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}
