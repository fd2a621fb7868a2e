import { ApiError } from '../http/index.js';
import type { EtcdClient, EtcdCompare } from './etcd-client.js';
import { orUnavailable } from './etcd-unavailable.js';
import { keys } from './keys.js';
import { unknownNode } from './peer-request.js';
import type { ClusterSnapshot } from './view.js';

/**
 * Makes `target` the leader (`PUT /api/v3/cluster/transfer/:id`): the leader key is written with
 * the target's id under the target's own lease, so it ends with the target as an elected one does.
 * It holds only if the leader is still the one read and the target's registration is the one read;
 * the old leader's next move then fails its compare on the leader key, and it stops leading.
 */
export async function transferLeadership(
  etcd: EtcdClient,
  snapshot: ClusterSnapshot,
  target: string,
): Promise<void> {
  if (snapshot.leader === target) return;
  const { kvs } = await orUnavailable(() => etcd.range(keys.node(target)));
  const registration = kvs[0];
  if (registration === undefined || registration.lease === '0') throw unknownNode(target);
  const compare: EtcdCompare[] = [
    snapshot.leader === undefined
      ? { key: keys.leader, target: 'CREATE', createRevision: 0 }
      : { key: keys.leader, target: 'VALUE', value: JSON.stringify(snapshot.leader) },
    { key: keys.node(target), target: 'CREATE', createRevision: registration.createRevision },
  ];
  const result = await orUnavailable(() =>
    etcd.txn(compare, [
      { put: { key: keys.leader, value: JSON.stringify(target), lease: registration.lease } },
    ]),
  );
  if (!result.succeeded)
    throw new ApiError(
      'CONFLICT',
      'the leader changed while the transfer was made; read GET /api/v3/cluster and retry',
      {
        message: 'Leader changed',
      },
    );
  snapshot.leader = target;
}
