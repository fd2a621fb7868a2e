import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMain } from '../helpers/main-process.js';

export interface ClusterNode {
  id: string;
  url: string;
  pid: number;
  run: ReturnType<typeof startMain>;
}

/** A streamcore node as its own process (so that it can be killed or paused), joined to `endpoints`. */
export async function startNode(
  dir: string,
  id: string,
  endpoints: string[],
  ttlSeconds: number,
  /** More settings, over the defaults (API authentication, for one). */
  env: Record<string, string> = {},
): Promise<ClusterNode> {
  const home = join(dir, id);
  mkdirSync(join(home, 'config'), { recursive: true });
  // In the file, not the env, so that a reload may move it (the config API refuses to change env keys).
  const file = join(home, 'config', 'config.json');
  if (!existsSync(file)) writeFileSync(file, JSON.stringify({ address: '127.0.0.1:0' }));
  const run = startMain(
    {
      CORE_ID: id,
      CORE_API_AUTH_ENABLE: 'false',
      CORE_DB_DIR: join(home, 'db'),
      CORE_STORAGE_DISK_DIR: join(home, 'data'),
      CORE_SESSIONS_ENABLE: 'false',
      CORE_CLUSTER_ENABLE: 'true',
      CORE_CLUSTER_ETCD_ENDPOINTS: endpoints.join(','),
      CORE_CLUSTER_NODE_ID: id,
      CORE_CLUSTER_LEASE_TTL_SEC: String(ttlSeconds),
      CORE_LOG_LEVEL: 'info',
      ...env,
    },
    home,
  );
  const url = await run.listening;
  return { id, url, pid: run.child.pid as number, run };
}
