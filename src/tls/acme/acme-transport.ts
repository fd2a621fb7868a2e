import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface AcmeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One HTTP exchange with the ACME server. */
export type AcmeTransport = (request: {
  method: 'GET' | 'HEAD' | 'POST';
  url: string;
  body?: string;
}) => Promise<AcmeResponse>;

/** Answers larger than this are refused: a certificate chain is a few KiB. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The transport over node's HTTP client. `ca`: the PEM roots to trust instead of node's
 * (tls.acme.ca_file, for a private ACME server); per request, so two servers in one process do
 * not share it. Every exchange is limited to `timeoutMs`.
 */
export function createAcmeTransport(options: { ca?: Buffer; timeoutMs: number }): AcmeTransport {
  return ({ method, url, body }) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const send = target.protocol === 'http:' ? httpRequest : httpsRequest;
      const request = send(
        target,
        {
          method,
          timeout: options.timeoutMs,
          ...(options.ca === undefined ? {} : { ca: options.ca }),
          headers: {
            'user-agent': 'streamcore-acme',
            ...(body === undefined
              ? {}
              : { 'content-type': 'application/jose+json', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) request.destroy(new Error(`answer of ${url} is larger than 1 MiB`));
            else chunks.push(chunk);
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks),
            }),
          );
          response.on('error', reject);
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`no answer from ${url} within ${options.timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.end(body);
    });
}
