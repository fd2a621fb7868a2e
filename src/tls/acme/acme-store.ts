import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../persistence/atomic-write.js';

const ACCOUNT_KEY = 'account.key';
const ACCOUNTS = 'accounts.json';
const CERTIFICATE = 'certificate.pem';
const CERTIFICATE_KEY = 'certificate.key';

/**
 * `<db.dir>/cert`: the ACME account key, the account URL per CA directory, and the certificate
 * with its key. The directory is 0700 and every file 0600; the db directory is hidden from
 * encoders by the access policy and the sandbox (docs/security.md).
 */
export class AcmeStore {
  constructor(private readonly dir: string) {}

  /** The account key, made (ECDSA P-256) and stored on first use. */
  async accountKey(): Promise<KeyObject> {
    const stored = await this.read(ACCOUNT_KEY);
    if (stored !== undefined) return createPrivateKey(stored);
    const key = newEcKey();
    await this.write(ACCOUNT_KEY, key.export({ type: 'pkcs8', format: 'pem' }).toString());
    return key;
  }

  async accountUrl(directoryUrl: string): Promise<string | undefined> {
    return (await this.accounts())[directoryUrl];
  }

  async saveAccountUrl(directoryUrl: string, url: string): Promise<void> {
    const accounts = await this.accounts();
    accounts[directoryUrl] = url;
    await this.write(ACCOUNTS, `${JSON.stringify(accounts, null, 2)}\n`);
  }

  /** The stored certificate chain and key, if both are there. */
  async certificate(): Promise<{ cert: Buffer; key: Buffer } | undefined> {
    const [cert, key] = await Promise.all([this.read(CERTIFICATE), this.read(CERTIFICATE_KEY)]);
    return cert === undefined || key === undefined ? undefined : { cert, key };
  }

  /** Key first: a crash between the two writes leaves a pair that fails the check and is obtained again. */
  async saveCertificate(cert: string, key: string): Promise<void> {
    await this.write(CERTIFICATE_KEY, key);
    await this.write(CERTIFICATE, cert);
  }

  private async accounts(): Promise<Record<string, string>> {
    const text = await this.read(ACCOUNTS);
    if (text === undefined) return {};
    const parsed = JSON.parse(text.toString('utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
  }

  private async read(name: string): Promise<Buffer | undefined> {
    try {
      return await readFile(join(this.dir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  private async write(name: string, data: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await writeFileAtomic(join(this.dir, name), data, 0o600);
  }
}

/** A fresh ECDSA P-256 key (accounts and certificates alike). */
export function newEcKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}
