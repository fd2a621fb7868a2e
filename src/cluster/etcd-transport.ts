/**
 * How the etcd client reaches a member: one JSON `POST` over `node:http` or `node:https`, with a
 * keep-alive agent per scheme.
 *
 * Not `fetch`: Node 20's `fetch` (its bundled undici) takes no CA or client certificate per call.
 * That needs an undici `Agent` as its `dispatcher`, which Node 20 does not export; the `undici`
 * package from npm would be a second HTTP stack beside the bundled one, whose dispatcher is only
 * guaranteed to work with its own `fetch`. `https.Agent` takes `ca`, `cert` and `key` as they are
 * and pools connections, with no dependency.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** PEM files for `https://` members (config keys `cluster.etcd.*_file`); '' or absent: not used. */
export interface EtcdTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export interface EtcdAnswer {
  status: number;
  text: string;
}

export interface EtcdTransport {
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<EtcdAnswer>;
  /** Closes the pooled connections. */
  close(): void;
}

/**
 * Reads the PEM files once, at start; a file that cannot be read, or a certificate without its
 * key, throws naming the key (the start fails rather than a node that never joins).
 */
export function etcdTransport(endpoints: readonly string[], files: EtcdTlsFiles = {}): EtcdTransport {
  const tls = readTlsFiles(files);
  if (tls !== undefined && endpoints.some((url) => !url.startsWith('https://')))
    throw new Error(
      'cluster.etcd.ca_file, cluster.etcd.cert_file, cluster.etcd.key_file: set, but cluster.etcd.endpoints has an http:// URL (TLS needs https://)',
    );
  const http = new HttpAgent({ keepAlive: true });
  const https = new HttpsAgent({ keepAlive: true, ...tls });
  return {
    post: (url, body, headers, timeoutMs) =>
      new Promise((resolve, reject) => {
        const secure = url.startsWith('https://');
        const send = secure ? httpsRequest : httpRequest;
        const request = send(url, {
          method: 'POST',
          agent: secure ? https : http,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          signal: AbortSignal.timeout(timeoutMs),
        });
        request.once('error', (error) => reject(new Error(explain(error, timeoutMs), { cause: error })));
        request.once('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.once('error', reject);
          response.once('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
        });
        request.end(body);
      }),
    close: () => {
      http.destroy();
      https.destroy();
    },
  };
}

function readTlsFiles(files: EtcdTlsFiles): { ca?: Buffer; cert?: Buffer; key?: Buffer } | undefined {
  const read = (key: string, file: string | undefined): Buffer | undefined => {
    if (file === undefined || file === '') return undefined;
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`${key}: cannot read "${file}": ${(error as Error).message}`, { cause: error });
    }
  };
  const ca = read('cluster.etcd.ca_file', files.caFile);
  const cert = read('cluster.etcd.cert_file', files.certFile);
  const key = read('cluster.etcd.key_file', files.keyFile);
  if ((cert === undefined) !== (key === undefined))
    throw new Error('cluster.etcd.cert_file, cluster.etcd.key_file: set both or neither');
  if (ca === undefined && cert === undefined) return undefined;
  return { ...(ca && { ca }), ...(cert && { cert }), ...(key && { key }) };
}

/** OpenSSL's verdicts on a server certificate that no configured CA vouches for. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * A failed call in words an operator can act on: the TLS failures name the key to fix, since
 * OpenSSL's own words ("tlsv13 alert certificate required") do not say whose certificate.
 */
function explain(error: Error & { code?: string }, timeoutMs: number): string {
  const code = error.code ?? '';
  if (error.name === 'AbortError' || error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (UNTRUSTED.has(code))
    return `etcd's certificate is not signed by a CA this node trusts (cluster.etcd.ca_file): ${error.message}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `etcd's certificate does not name the endpoint's host: ${error.message}`;
  if (code === 'CERT_HAS_EXPIRED') return `etcd's certificate has expired: ${error.message}`;
  const alert = /alert (certificate required|bad certificate|unknown ca|certificate unknown)/i.exec(
    error.message,
  );
  if (alert !== null)
    return `etcd refused this node's client certificate (cluster.etcd.cert_file, cluster.etcd.key_file: none given, or not signed by etcd's --trusted-ca-file): TLS alert "${alert[1]}"`;
  if (/wrong version number|packet length too long/i.test(error.message))
    return `the endpoint does not speak TLS (use http://, or https:// on etcd's TLS port): ${error.message}`;
  return error.message;
}
