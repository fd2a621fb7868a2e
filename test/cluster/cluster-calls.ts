import { marker } from './encoder-census.js';

/** A process of the test: a tiny lavfi encoder whose command line carries its marker. */
export function processBody(id: string): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: 'testsrc=size=64x64:rate=5', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-metadata', `title=${marker(id)}`, '-f', 'null'] }],
    autostart: true,
    reconnect: true,
    reconnect_delay_seconds: 1,
  };
}

/** A process as the list answers it. */
export interface ProcessAnswer {
  id: string;
  core_id?: string;
  state?: { exec: string; pid: number };
}

/** The fields of the answers the cluster tests read. */
export interface Answer {
  code?: number;
  details?: string[];
  exec?: string;
  core_id?: string;
  state?: string;
  hello?: number;
  leader?: { id: string };
  nodes?: { id: string; status: string; address: string; resources?: { processes: number } }[];
}

export async function call(
  url: string,
  method = 'GET',
  body?: unknown,
): Promise<{ status: number; json: Answer }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  return { status: response.status, json: (text === '' ? {} : JSON.parse(text)) as Answer };
}

/** Polls `probe` every 200 ms until it answers something, or fails past `timeoutMs`. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms ${last instanceof Error ? last.message : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every node at `urls` knows all of them and the same leader (which places every create). */
export async function untilOneLeader(urls: string[]): Promise<void> {
  await until(`${urls.length} nodes and a leader`, 20_000, async () => {
    const answers = await Promise.all(urls.map(async (url) => (await call(`${url}/api/v3/cluster`)).json));
    const leaders = new Set(answers.map((json) => json.leader?.id));
    const known = answers.every((json) => json.nodes?.length === urls.length);
    return known && leaders.size === 1 && !leaders.has('') ? answers : undefined;
  });
}

/**
 * The processes per node once no move is under way: every process runs (one encoder each, by
 * `census`) on the node etcd assigns it to, i.e. the list (by the node that answers for each)
 * and `GET /api/v3/cluster` (assignments) count alike. Undefined while they differ.
 */
export async function settledCounts(
  url: string,
  running: (list: ProcessAnswer[]) => Promise<boolean>,
): Promise<Map<string, number> | undefined> {
  const list = (await call(`${url}/api/v3/process?filter=state`)).json as unknown as ProcessAnswer[];
  const about = (await call(`${url}/api/v3/cluster`)).json;
  const listed = new Map<string, number>();
  for (const process of list) listed.set(process.core_id ?? '', (listed.get(process.core_id ?? '') ?? 0) + 1);
  const assigned = new Map<string, number>();
  for (const node of about.nodes ?? []) assigned.set(node.id, node.resources?.processes ?? 0);
  for (const [node, count] of assigned) if ((listed.get(node) ?? 0) !== count) return undefined;
  if (!(await running(list))) return undefined;
  return assigned;
}
