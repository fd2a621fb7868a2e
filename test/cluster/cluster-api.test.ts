import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLUSTER_API_DOCS } from '../../src/cluster/index.js';
import { rawRequest } from '../storage/raw-request.js';
import { startNode, type ClusterNode } from './cluster-nodes.js';
import { EtcdMembers } from './etcd-members.js';

const LEASE_TTL_SEC = 8;
const AUTH = {
  CORE_API_AUTH_ENABLE: 'true',
  CORE_API_AUTH_USERNAME: 'admin',
  CORE_API_AUTH_PASSWORD: 'cluster-api-test-password',
  CORE_API_AUTH_JWT_SECRET: 'cluster-api-test-jwt-secret-of-enough-length',
};

interface Answer {
  status: number;
  text: string;
  json: unknown;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The reference's `/api/v3/cluster/*` routes beyond the process aliases (docs/cluster.md#the-references-cluster-routes),
 * on a real etcd member and two real nodes with API authentication on.
 */
describe('the cluster API routes of the reference', () => {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-cluster-api-'));
  let etcd: EtcdMembers;
  const nodes: ClusterNode[] = [];
  let token = '';

  const a = (): ClusterNode => nodes[0] as ClusterNode;
  const b = (): ClusterNode => nodes[1] as ClusterNode;

  async function call(node: ClusterNode, path: string, method = 'GET', body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (token !== '') headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(node.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, text, json };
  }

  const leaderOf = async (node: ClusterNode): Promise<string> =>
    ((await call(node, '/api/v3/cluster')).json as { leader: { id: string } }).leader.id;

  before(async () => {
    etcd = await EtcdMembers.start(join(dir, 'etcd'), 1);
    for (const id of ['a', 'b']) nodes.push(await startNode(dir, id, etcd.endpoints, LEASE_TTL_SEC, AUTH));
    const login = await fetch(`${a().url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: AUTH.CORE_API_AUTH_USERNAME, password: AUTH.CORE_API_AUTH_PASSWORD }),
    });
    token = ((await login.json()) as { access_token: string }).access_token;
    await until('two nodes and a leader', 30_000, async () => {
      const answers = await Promise.all(nodes.map((node) => call(node, '/api/v3/cluster')));
      const ok = answers.every((answer) => {
        const about = answer.json as { nodes?: unknown[]; leader?: { id: string } };
        return about.nodes?.length === 2 && about.leader?.id !== '';
      });
      return ok ? true : undefined;
    });
  });

  after(async () => {
    for (const node of nodes) {
      node.run.child.kill('SIGTERM');
      await node.run.exited;
    }
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every route behind the API guard', async () => {
    const routes: [string, number][] = [
      ['/api/v3/cluster/node', 200],
      ['/api/v3/cluster/db/process', 200],
      ['/api/v3/cluster/db/kv', 200],
      ['/api/v3/cluster/fs/mem', 200],
      ['/api/v3/cluster/iam/user', 501],
    ];
    const saved = token;
    token = '';
    try {
      for (const [path] of routes) {
        const answer = await call(b(), path);
        assert.equal(answer.status, 401, path);
        assert.equal((answer.json as { code: number }).code, 401, `${path}: the v16 envelope`);
      }
    } finally {
      token = saved;
    }
    for (const [path, status] of routes)
      assert.equal((await call(b(), path)).status, status, `${path} with a token`);
  });

  it('lists the nodes in the reference shape, one by id, and its state', async () => {
    const list = (await call(b(), '/api/v3/cluster/node')).json as Record<string, unknown>[];
    assert.deepEqual(
      list.map((node) => node.id),
      ['a', 'b'],
    );
    const first = list[0] as {
      name: string;
      voter: boolean;
      created_at: string;
      address: string;
      core: { address: string };
      resources: { ncpu: number; cpu_limit: number };
    };
    assert.equal(first.name, 'a');
    assert.equal(first.voter, true);
    assert.match(first.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(first.address, a().url);
    assert.equal(first.core.address, a().url);
    assert.ok(first.resources.ncpu > 0 && first.resources.cpu_limit === 100 * first.resources.ncpu);

    const one = await call(a(), '/api/v3/cluster/node/b');
    assert.equal(one.status, 200);
    assert.equal((one.json as { id: string }).id, 'b');
    const missing = await call(a(), '/api/v3/cluster/node/nowhere');
    assert.equal(missing.status, 404);
    assert.match(
      (missing.json as { details: string[] }).details[0] ?? '',
      /node "nowhere" is not in the cluster/,
    );
    assert.deepEqual((await call(a(), '/api/v3/cluster/node/b/state')).json, { state: 'online' });
    assert.equal((await call(a(), '/api/v3/cluster/healthy')).json, true);
  });

  it("answers a node's version, as its GET /api says", async () => {
    const version = await call(a(), '/api/v3/cluster/node/b/version');
    assert.equal(version.status, 200);
    assert.equal((version.json as { number: string }).number, '16.16.0');
  });

  it("lists a node's processes, the store's processes and which node has each", async () => {
    const created = await call(a(), '/api/v3/process', 'POST', {
      id: 'api-probe',
      reference: 'ref-1',
      input: [{ id: 'in', address: 'testsrc=size=64x64:rate=5', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      autostart: false,
    });
    assert.equal(created.status, 200, created.text);
    const map = await until('the process in the map', 10_000, async () => {
      const answer = (await call(b(), '/api/v3/cluster/db/map/process')).json as Record<string, string>;
      return answer['api-probe'] === undefined ? undefined : answer;
    });
    const owner = map['api-probe'] as string;
    const other = owner === 'a' ? 'b' : 'a';

    const onOwner = (await call(b(), `/api/v3/cluster/node/${owner}/process`)).json as {
      id: string;
      core_id: string;
    }[];
    assert.deepEqual(
      onOwner.map((process) => [process.id, process.core_id]),
      [['api-probe', owner]],
    );
    assert.deepEqual((await call(b(), `/api/v3/cluster/node/${other}/process`)).json, []);
    const filtered = await call(a(), `/api/v3/cluster/node/${owner}/process?reference=other`);
    assert.deepEqual(filtered.json, [], 'the query is passed on');

    const stored = (await call(b(), '/api/v3/cluster/db/process')).json as {
      id: string;
      reference: string;
      type: string;
      config: { id: string; input: unknown[] };
    }[];
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.id, 'api-probe');
    assert.equal(stored[0]?.reference, 'ref-1');
    assert.equal(stored[0]?.type, 'ffmpeg');
    assert.equal(stored[0]?.config.input.length, 1);
    assert.equal(
      ((await call(a(), '/api/v3/cluster/db/process/api-probe')).json as { id: string }).id,
      'api-probe',
    );
    assert.equal((await call(a(), '/api/v3/cluster/db/process/nothing')).status, 404);
    assert.deepEqual((await call(a(), '/api/v3/cluster/db/map/reallocate')).json, {});
    const storeNodes = (await call(a(), '/api/v3/cluster/db/node')).json as { id: string; state: string }[];
    assert.deepEqual(
      storeNodes.map((node) => [node.id, node.state]),
      [
        ['a', 'online'],
        ['b', 'online'],
      ],
    );

    // The probe through the cluster alias: real ffmpeg on the process's input, on its node.
    const probe = await call(a(), '/api/v3/cluster/process/api-probe/probe');
    assert.equal(probe.status, 200, probe.text);
    const streams = (probe.json as { streams: { type: string }[] }).streams;
    // The probe of a config, on the node the client names (the reference's `coreid`).
    const config = {
      input: [{ id: 'in', address: 'testsrc=size=32x32:rate=5', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    };
    const onOther = await call(a(), `/api/v3/cluster/process/probe?coreid=${other}`, 'POST', config);
    assert.equal(onOther.status, 200, onOther.text);
    assert.equal((onOther.json as { streams: { width: number }[] }).streams[0]?.width, 32);
    assert.equal(
      (await call(a(), '/api/v3/cluster/process/probe?coreid=nowhere', 'POST', config)).status,
      404,
    );
    assert.equal((await call(a(), '/api/v3/cluster/process/probe', 'POST', { input: [] })).status, 400);
    assert.ok(
      streams.some((stream) => stream.type === 'video'),
      probe.text,
    );
  });

  it('lists, reads and deletes files on every node', async () => {
    assert.equal((await call(a(), '/api/v3/fs/mem/on-a.txt', 'PUT', 'from a')).status < 300, true);
    assert.equal((await call(b(), '/api/v3/fs/mem/on-b.txt', 'PUT', 'from b, longer')).status < 300, true);

    const all = (await call(a(), '/api/v3/cluster/fs/mem?sort=size&order=desc')).json as {
      name: string;
      core_id: string;
    }[];
    assert.deepEqual(
      all.map((file) => [file.name, file.core_id]),
      [
        ['/on-b.txt', 'b'],
        ['/on-a.txt', 'a'],
      ],
    );
    const onB = (await call(a(), '/api/v3/cluster/node/b/fs/mem')).json as { name: string }[];
    assert.deepEqual(
      onB.map((file) => file.name),
      ['/on-b.txt'],
    );
    const files = (await call(a(), '/api/v3/cluster/node/b/files')).json as {
      last_update: number;
      files: Record<string, string[]>;
    };
    assert.deepEqual(files.files.mem, ['/on-b.txt']);
    assert.ok(Math.abs(files.last_update - Date.now() / 1000) < 60);

    const read = await call(a(), '/api/v3/cluster/node/b/fs/mem/on-b.txt');
    assert.equal(read.status, 200);
    assert.equal(read.text, 'from b, longer');
    assert.equal((await call(a(), '/api/v3/cluster/node/b/fs/mem/nothing.txt')).status, 404);
    // Written on b through a, the body as it is.
    const written = await fetch(`${a().url}/api/v3/cluster/node/b/fs/mem/sub/put.bin`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: Buffer.from([0, 1, 2, 255]),
    });
    assert.equal(written.status, 201, await written.text());
    const onNodeB = await fetch(`${b().url}/api/v3/fs/mem/sub/put.bin`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.deepEqual([...Buffer.from(await onNodeB.arrayBuffer())], [0, 1, 2, 255]);
    assert.equal((await call(a(), '/api/v3/cluster/node/b/fs/mem/on-b.txt', 'DELETE')).status, 200);
    assert.equal((await call(b(), '/api/v3/fs/mem/on-b.txt')).status, 404, 'deleted on b');
    // A dot segment would make the node's URL another route than the one asked for.
    const dots = await rawRequest(a().url, '/api/v3/cluster/node/b/fs/mem/x/%2e%2e/%2e%2e/%2e%2e/config', {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(dots.status, 400, dots.body.toString());
    assert.match(
      (JSON.parse(dots.body.toString()) as { details: string[] }).details[0] ?? '',
      /^path: must not contain/,
    );
    const badQuery = await call(a(), '/api/v3/cluster/fs/mem?order=sideways');
    assert.equal(badQuery.status, 400);
    assert.match((badQuery.json as { details: string[] }).details.join(), /order/);
  });

  it('keeps keys in etcd, seen from every node', async () => {
    assert.equal((await call(a(), '/api/v3/cluster/kv', 'POST', { key: 'k1', value: 'v1' })).status, 200);
    const all = (await call(b(), '/api/v3/cluster/db/kv')).json as Record<
      string,
      { value: string; updated_at: string }
    >;
    assert.equal(all.k1?.value, 'v1');
    assert.match(all.k1?.updated_at ?? '', /Z$/);
    assert.equal(((await call(b(), '/api/v3/cluster/kv/k1')).json as { value: string }).value, 'v1');
    assert.equal((await call(b(), '/api/v3/cluster/kv/k1', 'DELETE')).status, 200);
    assert.equal((await call(a(), '/api/v3/cluster/kv/k1')).status, 404);
    assert.equal((await call(a(), '/api/v3/cluster/kv/k1', 'DELETE')).status, 404);
    const bad = await call(a(), '/api/v3/cluster/kv', 'POST', { key: 'a/b', value: 'x' });
    assert.equal(bad.status, 400);
    const noValue = await call(a(), '/api/v3/cluster/kv', 'POST', { key: 'k2' });
    assert.equal(noValue.status, 400);
    assert.match((noValue.json as { details: string[] }).details.join(), /value/);
  });

  it('holds a lock for one holder until it is released or its time is up', async () => {
    const soon = new Date(Date.now() + 2000).toISOString();
    const taken = await call(a(), '/api/v3/cluster/lock', 'POST', { name: 'job', valid_until: soon });
    assert.equal(taken.status, 200, taken.text);
    const again = await call(b(), '/api/v3/cluster/lock', 'POST', { name: 'job', valid_until: soon });
    assert.equal(again.status, 409);
    assert.match((again.json as { details: string[] }).details[0] ?? '', /the lock "job" is held until/);
    const held = (await call(b(), '/api/v3/cluster/db/locks')).json as { name: string }[];
    assert.deepEqual(
      held.map((lock) => lock.name),
      ['job'],
    );
    // etcd ends the lock's lease: the lock is gone without anyone releasing it.
    await until('the lock to end', 20_000, async () => {
      const locks = (await call(a(), '/api/v3/cluster/db/locks')).json as unknown[];
      return locks.length === 0 ? true : undefined;
    });
    const later = new Date(Date.now() + 60_000).toISOString();
    assert.equal(
      (await call(b(), '/api/v3/cluster/lock', 'POST', { name: 'job', valid_until: later })).status,
      200,
    );
    assert.equal((await call(a(), '/api/v3/cluster/lock/job', 'DELETE')).status, 200);
    assert.equal((await call(a(), '/api/v3/cluster/lock/job', 'DELETE')).status, 404);
    const past = await call(a(), '/api/v3/cluster/lock', 'POST', {
      name: 'x',
      valid_until: '2001-01-01T00:00:00Z',
    });
    assert.equal(past.status, 400);
  });

  it('transfers the leadership to another node', async () => {
    const leader = await leaderOf(a());
    const next = leader === 'a' ? 'b' : 'a';
    // As core-client-go sends it: no body, and an empty Content-Type header.
    const moved = await fetch(`${b().url}/api/v3/cluster/transfer/${next}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': '' },
    });
    assert.equal(moved.status, 200, await moved.text());
    await until('both nodes to see the new leader', 10_000, async () => {
      const leaders = await Promise.all(nodes.map(leaderOf));
      return leaders.every((id) => id === next) ? true : undefined;
    });
    assert.equal((await call(a(), '/api/v3/cluster/transfer/nowhere', 'PUT')).status, 404);
    // The new leader places creates.
    const created = await call(a(), '/api/v3/process', 'POST', {
      id: 'after-transfer',
      input: [{ id: 'in', address: 'testsrc', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      autostart: false,
    });
    assert.equal(created.status, 200, created.text);
  });

  it('answers 501 with the reason for the routes that have no counterpart', async () => {
    for (const [method, path, reason] of [
      ['GET', '/api/v3/cluster/iam/user', /no IAM/],
      ['GET', '/api/v3/cluster/db/user', /no IAM/],
      ['PUT', '/api/v3/cluster/leave', /stopping it/],
      ['GET', '/api/v3/cluster/snapshot', /etcdctl snapshot save/],
    ] as const) {
      const answer = await call(a(), path, method);
      assert.equal(answer.status, 501, path);
      const envelope = answer.json as { code: number; details: string[] };
      assert.equal(envelope.code, 501);
      assert.match(envelope.details[0] ?? '', reason);
    }
  });

  it('registers every route it describes, and describes them in the OpenAPI document', async () => {
    const document = (await call(a(), '/api/v3/openapi.json')).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    const keys = [...Object.keys(CLUSTER_API_DOCS), 'GET /api/v3/cluster/process/:id/probe'];
    for (const key of keys) {
      const [methods, url] = key.split(' ') as [string, string];
      const path = url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{*}');
      for (const method of methods.split(','))
        assert.ok(document.paths[path]?.[method.toLowerCase()], `${method} ${path} is in the document`);
    }
  });
});
