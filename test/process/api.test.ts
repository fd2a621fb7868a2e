import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, getState, lavfiProcess, ok, waitForState, type ProcessState } from './support.js';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

interface ProcessObject {
  id: string;
  type: string;
  reference: string;
  created_at: number;
  updated_at: number;
  config?: Record<string, unknown> & { id: string; input: { id: string }[]; output: { id: string }[] };
  state?: ProcessState;
  report?: unknown;
  metadata?: Record<string, unknown>;
}

const SHORT_UUID = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/;

describe('process API', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { password: 'memfs-secret' } } } } });
  });
  after(() => server.close());

  /** Asserts a 400 whose details mention `fragment`. */
  async function rejects(
    body: unknown,
    fragment: string | RegExp,
    path = '/process',
    method = 'POST',
  ): Promise<void> {
    const answer = await call<Envelope>(server, method, path, body);
    assert.equal(answer.status, 400, `${JSON.stringify(body)} → ${answer.text}`);
    assert.equal(answer.body.code, 400);
    assert.equal(typeof answer.body.message, 'string');
    const joined = answer.body.details.join('\n');
    if (typeof fragment === 'string') assert.ok(joined.includes(fragment), `"${fragment}" not in: ${joined}`);
    else assert.match(joined, fragment);
  }

  it('creates a process with every default filled, and starts it (autostart defaults to true)', async () => {
    const config = await ok<Record<string, unknown>>(server, 'POST', '/process', {
      input: [{ address: 'testsrc=size=32x24:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [{ address: '-', options: ['-f', 'null'] }],
    });
    assert.match(config.id as string, SHORT_UUID);
    const input = (config.input as Record<string, unknown>[])[0] as Record<string, unknown>;
    const output = (config.output as Record<string, unknown>[])[0] as Record<string, unknown>;
    assert.match(input.id as string, SHORT_UUID);
    assert.match(output.id as string, SHORT_UUID);
    assert.deepEqual(output.cleanup, []);
    assert.deepEqual(
      {
        type: config.type,
        reference: config.reference,
        options: config.options,
        reconnect: config.reconnect,
        reconnect_delay_seconds: config.reconnect_delay_seconds,
        autostart: config.autostart,
        stale_timeout_seconds: config.stale_timeout_seconds,
        limits: config.limits,
      },
      {
        type: 'ffmpeg',
        reference: '',
        options: [],
        reconnect: false,
        reconnect_delay_seconds: 0,
        autostart: true,
        stale_timeout_seconds: 0,
        limits: { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 },
      },
    );
    const id = config.id as string;
    await waitForState(server, id, 'running');
    assert.equal(await ok(server, 'DELETE', `/process/${id}`), 'OK');
  });

  it('rejects every invalid config with a 400 that names the problem', async () => {
    const valid = lavfiProcess('valid');
    const response = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id": "x",',
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as Envelope).message, 'Invalid JSON');
    const wrongType = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify(valid),
    });
    assert.equal(wrongType.status, 415);

    await rejects(undefined, 'body');
    await rejects([valid], 'body: must be a JSON object');
    await rejects({ ...valid, type: 'gstreamer' }, 'type: unsupported process type "gstreamer"');
    await rejects({ ...valid, input: [] }, 'input: at least one input is required');
    await rejects({ ...valid, output: undefined }, 'output: at least one output is required');
    await rejects({ ...valid, id: '' }, 'id: must not be empty');
    await rejects(
      { ...valid, input: [valid.input, valid.input].flat() },
      'input[1].id: duplicate input id "in"',
    );
    await rejects(
      { ...valid, output: [valid.output, valid.output].flat() },
      'output[1].id: duplicate output id "out"',
    );
    // Ids are compared as they run, placeholders resolved.
    await rejects(
      {
        ...valid,
        id: 'r1',
        output: [
          { id: '{processid}', address: '-', options: ['-f', 'null'] },
          { id: 'r1', address: '-', options: ['-f', 'null'] },
        ],
      },
      'output[1].id: duplicate output id "r1"',
    );
    await rejects(
      {
        ...valid,
        reference: 'cam',
        input: [
          { id: 'cam', address: 'testsrc', options: ['-f', 'lavfi'] },
          { id: '{reference}', address: 'testsrc', options: ['-f', 'lavfi'] },
        ],
      },
      'input[1].id: duplicate input id "cam" (written "{reference}")',
    );
    await rejects({ ...valid, input: [{ id: 'in', address: '' }] }, 'input[0].address: must not be empty');
    await rejects({ ...valid, output: [{ id: 'out', address: '' }] }, 'output[0].address: must not be empty');
    await rejects(
      { ...valid, output: [{ address: '/tmp/escape.ts' }] },
      /output\[0\]\.address "\/tmp\/escape\.ts": .*outside the disk/,
    );
    await rejects({ ...valid, output: [{ address: '../escape.ts' }] }, /outside the disk/);
    await rejects({ ...valid, output: [{ address: '{diskfs}/../escape.ts' }] }, /outside the disk/);
    await rejects({ ...valid, output: [{ address: 'file:///etc/escape.ts' }] }, /outside the disk/);
    await rejects(
      { ...valid, output: [{ address: '[f=mpegts]a.ts|[f=null]/tmp/b.ts' }] },
      /output\[0\]\.address: "\/tmp\/b\.ts" writes \/tmp\/b\.ts, outside the disk directory/,
    );
    await rejects({ ...valid, input: [{ address: '#nobody:output=out' }] }, 'unknown process "nobody"');
    await ok(server, 'POST', '/process', lavfiProcess('source'));
    await rejects({ ...valid, input: [{ address: '#source:output=nothing' }] }, 'has no output "nothing"');
    await rejects(
      { ...valid, reconnect_delay_seconds: -1 },
      'reconnect_delay_seconds: must be a non-negative integer',
    );
    await rejects(
      { ...valid, stale_timeout_seconds: 1.5 },
      'stale_timeout_seconds: must be a non-negative integer',
    );
    await rejects(
      { ...valid, limits: { memory_mbytes: '10' } },
      'limits.memory_mbytes: must be a non-negative integer',
    );
    await rejects({ ...valid, limits: { cpu_usage: -5 } }, 'limits.cpu_usage: must be a non-negative number');
    await rejects({ ...valid, reconnect: 'yes' }, 'reconnect: must be a boolean');
    await rejects({ ...valid, options: ['-y', 3] }, 'options: must be an array of strings');
    await rejects(
      { ...valid, output: [{ address: '-', cleanup: [{ pattern: '/x/*.ts', max_files: 1 }] }] },
      'output[0].cleanup[0].pattern: must start with mem:, memfs:, disk: or diskfs:',
    );
    await rejects(
      { ...valid, output: [{ address: '-', cleanup: [{ pattern: 'memfs:/x/*.ts', max_files: -1 }] }] },
      'output[0].cleanup[0].max_files: must be a non-negative integer',
    );
    await ok(server, 'POST', '/process', valid);
    await rejects(valid, 'id: a process with id "valid" already exists');
    // Nothing of the rejected bodies was created.
    const ids = (await ok<ProcessObject[]>(server, 'GET', '/process?filter=config')).map((p) => p.id);
    assert.deepEqual(ids, ['source', 'valid']);
    await ok(server, 'DELETE', '/process/source');
    await ok(server, 'DELETE', '/process/valid');
  });

  it('answers 413 for an oversized body and 405 for a wrong method', async () => {
    const big = await call<Envelope>(server, 'POST', '/process', {
      ...lavfiProcess('big'),
      padding: 'x'.repeat(100_000),
    });
    assert.equal(big.status, 413);
    assert.equal(big.body.code, 413);
    const wrong = await call<Envelope>(server, 'PATCH', '/process');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.body.code, 405);
  });

  it('lists processes sorted by id, with filter, id, reference and glob selection', async () => {
    for (const [id, reference] of [
      ['cam-b', 'studio'],
      ['cam-a', 'studio'],
      ['snap-1', 'lobby'],
      ['other', ''],
    ] as const) {
      await ok(server, 'POST', '/process', lavfiProcess(id, { reference }));
    }
    const all = await ok<ProcessObject[]>(server, 'GET', '/process');
    assert.deepEqual(
      all.map((p) => p.id),
      ['cam-a', 'cam-b', 'other', 'snap-1'],
    );
    for (const p of all) {
      assert.deepEqual(Object.keys(p).sort(), [
        'config',
        'created_at',
        'id',
        'metadata',
        'reference',
        'report',
        'state',
        'type',
        'updated_at',
      ]);
    }
    const onlyState = await ok<ProcessObject[]>(server, 'GET', '/process?filter=state');
    assert.ok(
      onlyState.every((p) => p.state !== undefined && p.config === undefined && p.report === undefined),
    );
    const two = await ok<ProcessObject[]>(server, 'GET', '/process?filter=config,metadata');
    assert.ok(two.every((p) => p.config !== undefined && p.metadata !== undefined && p.state === undefined));
    const byIds = await ok<ProcessObject[]>(server, 'GET', '/process?id=snap-1,cam-b,missing');
    assert.deepEqual(
      byIds.map((p) => p.id),
      ['cam-b', 'snap-1'],
    );
    const byReference = await ok<ProcessObject[]>(server, 'GET', '/process?reference=studio');
    assert.deepEqual(
      byReference.map((p) => p.id),
      ['cam-a', 'cam-b'],
    );
    const byIdGlob = await ok<ProcessObject[]>(server, 'GET', '/process?idpattern=cam-*');
    assert.deepEqual(
      byIdGlob.map((p) => p.id),
      ['cam-a', 'cam-b'],
    );
    const byRefGlob = await ok<ProcessObject[]>(server, 'GET', '/process?refpattern=lob?y&filter=config');
    assert.deepEqual(
      byRefGlob.map((p) => p.id),
      ['snap-1'],
    );
    const combined = await ok<ProcessObject[]>(
      server,
      'GET',
      '/process?idpattern=*-*&refpattern=studio&id=cam-a',
    );
    assert.deepEqual(
      combined.map((p) => p.id),
      ['cam-a'],
    );
    // A malformed glob is a 400 naming the parameter, not an empty list.
    for (const [query, parameter] of [
      ['idpattern=cam-%5B', 'idpattern'],
      ['idpattern=%7Bcam-a,cam-b', 'idpattern'],
      ['refpattern=stud%7D', 'refpattern'],
      ['refpattern=studio%5C', 'refpattern'],
      ['refpattern=%5Bz-a%5D', 'refpattern'],
    ] as const) {
      const answer = await call<Envelope>(server, 'GET', `/process?${query}`);
      assert.equal(answer.status, 400, `${query}: ${answer.text}`);
      assert.equal(answer.body.code, 400);
      assert.match(answer.body.details.join(), new RegExp(`^${parameter}: invalid pattern`), query);
    }
    for (const id of ['cam-a', 'cam-b', 'snap-1', 'other']) await ok(server, 'DELETE', `/process/${id}`);
  });

  it('answers one process, its config, state and report', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('one', { reference: 'ref' }));
    const full = await ok<ProcessObject>(server, 'GET', '/process/one');
    assert.equal(full.type, 'ffmpeg');
    assert.equal(full.reference, 'ref');
    assert.equal(typeof full.created_at, 'number');
    assert.equal(full.updated_at, full.created_at);
    assert.deepEqual(full.metadata, {});
    const filtered = await ok<ProcessObject>(server, 'GET', '/process/one?filter=report');
    assert.ok(filtered.report !== undefined && filtered.config === undefined && filtered.state === undefined);
    const config = await ok<Record<string, unknown>>(server, 'GET', '/process/one/config');
    assert.deepEqual(config, full.config);
    const state = await getState(server, 'one');
    assert.equal(state.order, 'stop');
    assert.equal(state.exec, 'finished');
    assert.equal(state.reconnect_seconds, -1);
    // The user's arguments as the reference shows them: no binary, none of the server's options.
    assert.deepEqual(state.command, [
      '-loglevel',
      'info',
      '-re',
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=32x24:rate=10',
      '-f',
      'null',
      '-',
    ]);
    const report = await ok<Record<string, unknown>>(server, 'GET', '/process/one/report');
    assert.deepEqual(Object.keys(report).sort(), ['created_at', 'history', 'log', 'prelude']);
    await ok(server, 'DELETE', '/process/one');
  });

  it('shows in state.command the address a referenced output has now, also after that process changes', async () => {
    // The command of a process without references is kept between requests (it follows from its
    // config alone); one that reads another process's output must follow that process's updates.
    const source = (name: string): Record<string, unknown> =>
      lavfiProcess('src', {
        output: [{ id: 'out', address: `{memfs}/${name}.m3u8`, options: ['-f', 'hls'] }],
      });
    await ok(server, 'POST', '/process', source('first'));
    await ok(
      server,
      'POST',
      '/process',
      lavfiProcess('reader', { input: [{ id: 'in', address: '#src:output=out' }] }),
    );
    const address = (command: string[]): string | undefined => command[command.indexOf('-i') + 1];
    assert.match(address((await getState(server, 'reader')).command) ?? '', /\/memfs\/first\.m3u8$/);
    await ok(server, 'PUT', '/process/src', source('second'));
    assert.match(address((await getState(server, 'reader')).command) ?? '', /\/memfs\/second\.m3u8$/);
    const list = await ok<ProcessObject[]>(server, 'GET', '/process?id=reader&filter=state');
    assert.match(address(list[0]?.state?.command ?? []) ?? '', /\/memfs\/second\.m3u8$/);
    await ok(server, 'DELETE', '/process/reader');
    await ok(server, 'DELETE', '/process/src');
  });

  it('answers 404 "Unknown process ID" on every route for an unknown id', async () => {
    for (const [method, path, body] of [
      ['GET', '/process/ghost', undefined],
      ['GET', '/process/ghost/config', undefined],
      ['GET', '/process/ghost/state', undefined],
      ['GET', '/process/ghost/report', undefined],
      ['PUT', '/process/ghost', lavfiProcess('ghost')],
      ['DELETE', '/process/ghost', undefined],
      ['PUT', '/process/ghost/command', { command: 'start' }],
      ['GET', '/process/ghost/metadata', undefined],
      ['GET', '/process/ghost/metadata/key', undefined],
      ['PUT', '/process/ghost/metadata/key', { a: 1 }],
    ] as const) {
      const answer = await call<Envelope>(server, method, path, body);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(answer.body.message, 'Unknown process ID');
      assert.equal(answer.body.details.length, 1);
    }
  });

  it('updates by merging over the current config, keeping metadata and log history, and restarts a running process', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('upd', { autostart: true, reference: 'before' }));
    const before = await waitForState(server, 'upd', 'running', 15_000, 1);
    await ok(server, 'PUT', '/process/upd/metadata/note', { text: 'keep me' });
    const updated = await ok<Record<string, unknown>>(server, 'PUT', '/process/upd', {
      reference: 'after',
      output: [{ id: 'out', address: '-', options: ['-an', '-f', 'null'] }],
    });
    assert.equal(updated.reference, 'after');
    // The new config runs, in a new child.
    const after = await waitForState(server, 'upd', 'running', 15_000, 1);
    assert.notEqual(after.pid, before.pid);
    assert.deepEqual(after.command.slice(-4), ['-an', '-f', 'null', '-']);
    assert.ok(!before.command.includes('-an'));
    assert.deepEqual(
      updated.input,
      (lavfiProcess('upd').input as unknown[]).map((io) => ({ ...(io as object), cleanup: [] })),
    );
    assert.deepEqual(updated.options, ['-loglevel', 'info']);
    const object = await ok<ProcessObject>(server, 'GET', '/process/upd');
    assert.ok(object.updated_at >= object.created_at);
    assert.deepEqual(object.metadata, { note: { text: 'keep me' } });
    await waitForState(server, 'upd', 'running');
    const report = await ok<{ history: unknown[] }>(server, 'GET', '/process/upd/report');
    assert.ok(report.history.length >= 1, 'the run before the update is in the history');
    // Arrays are replaced, not merged; a stopped process stays stopped.
    await ok(server, 'PUT', '/process/upd/command', { command: 'stop' });
    const replaced = await ok<Record<string, unknown>>(server, 'PUT', '/process/upd', {
      options: ['-loglevel', 'error'],
    });
    assert.deepEqual(replaced.options, ['-loglevel', 'error']);
    assert.equal((await getState(server, 'upd')).order, 'stop');
    await rejects({ reconnect_delay_seconds: -3 }, 'reconnect_delay_seconds', '/process/upd', 'PUT');
    await rejects(undefined, 'body', '/process/upd', 'PUT');
    await ok(server, 'DELETE', '/process/upd');
  });

  it('keeps both changes of two concurrent PUTs to different fields', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('race', { autostart: true }));
    await waitForState(server, 'race', 'running', 15_000, 1);
    // Replacing a running process waits for the old child to exit: the second PUT arrives
    // while the first one is under way.
    const [first, second] = await Promise.all([
      call<Record<string, unknown>>(server, 'PUT', '/process/race', { reference: 'changed-by-first' }),
      call<Record<string, unknown>>(server, 'PUT', '/process/race', { options: ['-loglevel', 'warning'] }),
    ]);
    assert.deepEqual([first.status, second.status], [200, 200], `${first.text} ${second.text}`);
    const config = await ok<Record<string, unknown>>(server, 'GET', '/process/race/config');
    assert.equal(config.reference, 'changed-by-first');
    assert.deepEqual(config.options, ['-loglevel', 'warning']);
    await waitForState(server, 'race', 'running');
    assert.ok((await getState(server, 'race')).command.includes('warning'), 'the merged config runs');
    await ok(server, 'DELETE', '/process/race');
  });

  it('renames with PUT, but not onto an existing id', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('old-name'));
    await ok(server, 'POST', '/process', lavfiProcess('taken'));
    await rejects({ id: 'taken' }, 'a process with that id exists', '/process/old-name', 'PUT');
    const renamed = await ok<{ id: string }>(server, 'PUT', '/process/old-name', { id: 'new-name' });
    assert.equal(renamed.id, 'new-name');
    assert.equal((await call(server, 'GET', '/process/old-name')).status, 404);
    await ok(server, 'GET', '/process/new-name');
    await ok(server, 'DELETE', '/process/new-name');
    await ok(server, 'DELETE', '/process/taken');
  });

  it('runs the commands and rejects unknown ones with the list of known commands', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('cmd'));
    for (const body of [{ command: 'explode' }, {}, undefined, { command: 1 }]) {
      const answer = await call<Envelope>(server, 'PUT', '/process/cmd/command', body);
      assert.equal(answer.status, 400);
      assert.match(answer.body.details.join(), /start, stop, restart, reload/);
    }
    assert.equal(await ok(server, 'PUT', '/process/cmd/command', { command: 'start' }), 'OK');
    // Once it reports frames, ffmpeg handles SIGINT itself (exit 255 → finished).
    await waitForState(server, 'cmd', 'running', 15_000, 1);
    assert.equal(await ok(server, 'PUT', '/process/cmd/command', { command: 'stop' }), 'OK');
    // The stop call returns once the child has exited.
    const state = await getState(server, 'cmd');
    assert.equal(state.exec, 'finished');
    assert.equal(state.order, 'stop');
    await ok(server, 'DELETE', '/process/cmd');
  });

  it('keeps free-form metadata per process; null deletes a key', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('meta'));
    assert.deepEqual(await ok(server, 'GET', '/process/meta/metadata'), {});
    assert.deepEqual(await ok(server, 'PUT', '/process/meta/metadata/ui', { name: 'Camera', tags: [1, 2] }), {
      name: 'Camera',
      tags: [1, 2],
    });
    assert.equal(await ok(server, 'PUT', '/process/meta/metadata/plain', 'text'), 'text');
    assert.deepEqual(await ok(server, 'GET', '/process/meta/metadata/ui'), { name: 'Camera', tags: [1, 2] });
    assert.equal(await ok(server, 'GET', '/process/meta/metadata/plain'), 'text');
    assert.deepEqual(await ok(server, 'GET', '/process/meta/metadata'), {
      ui: { name: 'Camera', tags: [1, 2] },
      plain: 'text',
    });
    assert.equal(await ok(server, 'PUT', '/process/meta/metadata/plain', null), null);
    const missing = await call<Envelope>(server, 'GET', '/process/meta/metadata/plain');
    assert.equal(missing.status, 404);
    const noBody = await call<Envelope>(server, 'PUT', '/process/meta/metadata/x');
    assert.equal(noBody.status, 400);
    await ok(server, 'DELETE', '/process/meta');
  });

  it('never shows the memfs credentials, while the config keeps its placeholders', async () => {
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('creds'),
      output: [{ id: 'hls', address: '{memfs}/creds.m3u8', options: ['-f', 'hls', '-method', 'PUT'] }],
    });
    const answer = await call(server, 'GET', '/process/creds');
    assert.ok(!answer.text.includes('memfs-secret'), answer.text);
    // Not started: no run, so no run credential in its URL (and never the password).
    const state = await getState(server, 'creds');
    assert.ok(state.command.includes(`${server.url}/memfs/creds.m3u8`), state.command.join(' '));
    const config = await ok<{ output: { address: string }[] }>(server, 'GET', '/process/creds/config');
    assert.equal(config.output[0]?.address, '{memfs}/creds.m3u8');
    await ok(server, 'DELETE', '/process/creds');
  });
});

describe('ffmpeg.max_processes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { ffmpeg: { max_processes: 1 } } });
  });
  after(() => server.close());

  it('refuses to start more processes than allowed, with a clear 400', async () => {
    await ok(server, 'POST', '/process', lavfiProcess('first', { autostart: true }));
    const second = await call<Envelope>(
      server,
      'POST',
      '/process',
      lavfiProcess('second', { autostart: true }),
    );
    assert.equal(second.status, 400);
    assert.match(second.body.details.join(), /max_processes/);
    assert.equal(
      (await call(server, 'GET', '/process/second')).status,
      404,
      'the refused process was not created',
    );
    await ok(server, 'POST', '/process', lavfiProcess('third'));
    const start = await call<Envelope>(server, 'PUT', '/process/third/command', { command: 'start' });
    assert.equal(start.status, 400);
    assert.match(start.body.details.join(), /at most 1 process/);
    await ok(server, 'PUT', '/process/first/command', { command: 'stop' });
    await ok(server, 'PUT', '/process/third/command', { command: 'start' });
    await waitForState(server, 'third', 'running');
  });
});
