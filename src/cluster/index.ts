/**
 * cluster: several streamcore nodes as one (docs/cluster.md). etcd holds the processes, who runs
 * them and who leads; each node runs what it is assigned while its lease fences it, and answers
 * the whole process API by forwarding to the node that runs a process.
 */
export { Cluster, type ClusterDeps } from './cluster.js';
export { CLUSTER_DOCS } from './contract.js';
export { CLUSTER_API_DOCS } from './api-contract.js';
