import { ApiError } from '../http/index.js';
import { EtcdUnavailable } from './etcd-client.js';

/** The detail of every change refused because etcd cannot take it (docs/cluster.md#when-etcd-is-in-trouble). */
export const NO_QUORUM =
  'etcd has no quorum or cannot be reached: the cluster takes no changes until it is back; running processes go on';

/** `work`, with an etcd that cannot be asked answered as the cluster's 503. */
export async function orUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EtcdUnavailable)
      throw new ApiError('SERVICE_UNAVAILABLE', NO_QUORUM, { message: 'Cluster unavailable' });
    throw error;
  }
}
