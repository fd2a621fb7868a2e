import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { addressRefusal, guardedLookup } from './webhook-target.js';

/** One POST to a receiver: resolves when it answered 2xx, rejects with the reason otherwise. */
export type PostJson = (
  url: string,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
) => Promise<void>;

/** Most of a receiver's answer that is read (the rest is dropped): its status is what counts. */
const MAX_ANSWER_BYTES = 4096;

/**
 * The POST webhooks use: node's own client (no redirects followed), the address checked where the
 * connection is made (`guardedLookup`), literal addresses checked before (node does not look them up).
 */
export function createPostJson(allowLoopback: boolean, resolve?: LookupFunction): PostJson {
  const lookup = guardedLookup(allowLoopback, resolve);
  return (url, body, headers, signal) =>
    new Promise<void>((resolvePost, reject) => {
      const target = new URL(url);
      const host = target.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0) {
        const refusal = addressRefusal(host, allowLoopback);
        if (refusal !== undefined) return reject(new Error(`${host}: ${refusal}`));
      }
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
        lookup,
        signal,
      });
      request.once('error', (error) => reject(error));
      request.once('response', (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.once('error', () => undefined);
        response.once('close', () => {
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolvePost();
          else reject(new Error(`answered ${status}`));
        });
      });
      request.end(body);
    });
}
