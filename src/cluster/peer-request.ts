import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ERRORS, type ErrorCode } from '../http/index.js';
import { HOP_HEADER } from './forward.js';
import { peerFetch } from './peer-fetch.js';
import type { ClusterSnapshot } from './view.js';

/** What asking another node needs. */
export interface PeerDeps {
  me: string;
  /** This node's own API base URL. */
  selfAddress: () => string;
  snapshot: () => ClusterSnapshot;
  fetch: typeof fetch;
}

/** The base URL of node `id`'s API; 404 when the cluster has no such node. */
export function nodeAddress(deps: PeerDeps, id: string): string {
  if (id === deps.me) return deps.selfAddress();
  const node = deps.snapshot().nodes.get(id);
  if (node === undefined) throw unknownNode(id);
  return node.address;
}

/** The 404 of a node the cluster does not have. */
export function unknownNode(id: string): ApiError {
  return new ApiError('NOT_FOUND', `node "${id}" is not in the cluster`, { message: 'Unknown node' });
}

/**
 * `path` (with its query) asked of the node at `address`, with the client's credentials and the
 * hop header, so that the node answers from its own processes and files; 503 when it does not
 * answer.
 */
export async function askPeer(
  deps: PeerDeps,
  request: FastifyRequest,
  address: string,
  path: string,
  init: {
    method?: 'GET' | 'HEAD' | 'DELETE' | 'POST' | 'PUT';
    json?: unknown;
    /** A body passed on as it arrives (an upload), with the client's content type and length. */
    stream?: Readable;
  } = {},
): Promise<Response> {
  const headers: Record<string, string> = { [HOP_HEADER]: '1', 'accept-encoding': 'identity' };
  if (typeof request.headers.authorization === 'string')
    headers.authorization = request.headers.authorization;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.stream !== undefined)
    for (const name of ['content-type', 'content-length']) {
      const value = request.headers[name];
      if (typeof value === 'string' && value !== '') headers[name] = value;
    }
  return peerFetch(
    deps.fetch,
    address + path,
    {
      method: init.method ?? 'GET',
      headers,
      body: init.stream ?? (init.json === undefined ? undefined : JSON.stringify(init.json)),
      // A streamed body goes out as it is read (fetch requires saying so).
      ...(init.stream === undefined ? {} : { duplex: 'half' as const }),
    },
    `the node at ${address}`,
  );
}

/** The query of the request (`?…`, or ''), to pass on as it came. */
export function queryOf(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at);
}

/** A node's answer passed on as it is: status, content type and length, and the body as a stream. */
export function passOn(reply: FastifyReply, answer: Response): FastifyReply {
  void reply.code(answer.status);
  for (const name of ['content-type', 'content-length', 'last-modified', 'etag']) {
    const value = answer.headers.get(name);
    if (value !== null) void reply.header(name, value);
  }
  if (answer.body === null) return reply.send();
  return reply.send(Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>));
}

/** A node's JSON answer, or its error envelope passed on as the client's answer. */
export async function jsonOf<T>(answer: Response): Promise<T> {
  const text = await answer.text();
  if (answer.status !== 200) {
    const envelope = parseEnvelope(text);
    throw new ApiError(statusCode(answer.status), envelope?.details ?? [text], {
      message: envelope?.message ?? answer.statusText,
    });
  }
  return JSON.parse(text) as T;
}

function parseEnvelope(text: string): { message: string; details: string[] } | undefined {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; details?: unknown };
    if (typeof parsed.message !== 'string' || !Array.isArray(parsed.details)) return undefined;
    return { message: parsed.message, details: parsed.details.map(String) };
  } catch {
    return undefined;
  }
}

/** The error code of a status a node answered (a status without one of its own: 502). */
function statusCode(status: number): ErrorCode {
  return (Object.keys(ERRORS) as ErrorCode[]).find((code) => ERRORS[code].status === status) ?? 'BAD_GATEWAY';
}
