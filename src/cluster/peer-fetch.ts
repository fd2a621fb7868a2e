import { ApiError } from '../http/index.js';

/** How long a node waits for another node's answer before it answers 503 itself. */
const PEER_TIMEOUT_MS = 10_000;

/**
 * One request to another node (forwarded process requests, node routes): the peer's answer, or a
 * 503 with Retry-After naming `who` when it does not answer within the time-out, so a client
 * retries rather than seeing a node's network error.
 */
export async function peerFetch(
  fetchFn: typeof fetch,
  url: string,
  init: RequestInit & { duplex?: 'half' },
  who: string,
): Promise<Response> {
  try {
    return await fetchFn(url, { ...init, signal: AbortSignal.timeout(PEER_TIMEOUT_MS) });
  } catch (error) {
    throw new ApiError('SERVICE_UNAVAILABLE', `${who} did not answer: ${(error as Error).message}`, {
      message: 'Cluster node unavailable',
      headers: { 'retry-after': '5' },
    });
  }
}
