import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { V16_FIELDS } from '../../src/config-api/index.js';
import { getPath } from '../../src/config/index.js';
import { createServerLogger, LogBuffer } from '../../src/log/index.js';
import { uiPublicHost } from '../compat/client-checks.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

interface Envelope {
  code: number;
  message: string;
  details: string[];
}

interface ConfigAnswer {
  created_at: string;
  loaded_at: string;
  updated_at: string;
  config: Record<string, unknown>;
  overrides: string[];
}

/** A value of the wrong type for each kind of field. */
const WRONG: Record<string, unknown> = {
  bool: 'yes',
  int: 1.5,
  string: 7,
  strings: ['ok', 3],
  tenants: 'tenant',
  objects: [1],
  map: { a: 1 },
};

/** `{a: {b: value}}` for `a.b`. */
function nest(path: string, value: unknown): Record<string, unknown> {
  return path
    .split('.')
    .reverse()
    .reduce<unknown>((inner, part) => ({ [part]: inner }), value) as Record<string, unknown>;
}

async function putRaw(server: TestServer, body: string): Promise<{ status: number; body: Envelope }> {
  const response = await fetch(`${server.url}/api/v3/config`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

describe('config API (v16 layout)', () => {
  let server: TestServer;
  let configFile: string;
  before(async () => {
    server = await startServer({ env: { CORE_RTMP_TOKEN: 'from-env-token' } });
    configFile = join(server.dir, 'config.json');
  });
  after(() => server.close());

  it('answers the reference envelope with every v16 field of the right type, arrays never null', async () => {
    const answer = await ok<ConfigAnswer>(server, 'GET', '/config');
    for (const key of ['created_at', 'loaded_at', 'updated_at']) {
      const value = answer[key as keyof ConfigAnswer] as string;
      assert.ok(Number.isFinite(Date.parse(value)), `${key} is an RFC 3339 time: ${value}`);
    }
    assert.equal(answer.config.version, 3);
    for (const field of V16_FIELDS) {
      const value = getPath(answer.config, field.path);
      const type = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
      const expected = { bool: 'boolean', int: 'number', string: 'string', map: 'object' }[
        field.kind as string
      ];
      assert.equal(type, expected ?? 'array', `${field.path}: ${JSON.stringify(value)}`);
    }
    assert.deepEqual(answer.config.host, { name: [], auto: false });
    // The env var wins and is named, with the reference's variable name.
    assert.equal(getPath(answer.config, 'rtmp.token'), 'from-env-token');
    assert.deepEqual(answer.overrides, ['rtmp.token']);
    assert.equal(getPath(answer.config, 'api.auth.jwt.secret'), '');
  });

  it('takes its own answer back unchanged, and stores it with mode 0600', async () => {
    const before = await ok<ConfigAnswer>(server, 'GET', '/config');
    assert.equal(await ok(server, 'PUT', '/config', before.config), 'OK');
    const afterPut = await ok<ConfigAnswer>(server, 'GET', '/config');
    // Only the time the file was written differs.
    assert.deepEqual({ ...afterPut.config, created_at: '' }, { ...before.config, created_at: '' });
    assert.equal((await stat(configFile)).mode & 0o777, 0o600);
    // The env value is not written to the file: the file keeps its own (none).
    const text = await readFile(configFile, 'utf8');
    assert.equal(getPath(JSON.parse(text), 'rtmp.token'), undefined);
    assert.ok(!text.includes('from-env-token'));
  });

  it('keeps keys it does not implement (and unknown ones) as sent; updated_at passes loaded_at', async () => {
    const change = {
      version: 3,
      host: { name: ['tv.example.com'] },
      log: { max_lines: 500, topics: ['http'] },
      playout: { min_port: 7000 },
      storage: { disk: { cache: { ttl_seconds: 60 } } },
      some_newer_key: { deep: [1, 2] },
    };
    assert.equal(await ok(server, 'PUT', '/config', change), 'OK');
    const answer = await ok<ConfigAnswer>(server, 'GET', '/config');
    assert.deepEqual(getPath(answer.config, 'host.name'), ['tv.example.com']);
    assert.equal(getPath(answer.config, 'log.max_lines'), 500);
    assert.deepEqual(getPath(answer.config, 'log.topics'), ['http']);
    assert.equal(getPath(answer.config, 'playout.min_port'), 7000);
    assert.equal(getPath(answer.config, 'storage.disk.cache.ttl_seconds'), 60);
    assert.equal(getPath(answer.config, 'storage.disk.cache.max_file_size_mbytes'), 1);
    assert.deepEqual(answer.config.some_newer_key, { deep: [1, 2] });
    // Unchanged keys kept their values (a partial PUT).
    assert.equal(getPath(answer.config, 'api.auth.enable'), server.config.api.auth.enable);
    assert.ok(Date.parse(answer.updated_at) >= Date.parse(answer.loaded_at));
    const file = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(getPath(file, 'host.name'), ['tv.example.com']);
    assert.equal(getPath(file, 'v16_unimplemented.log.max_lines'), 500);
  });

  it('refuses malformed bodies with the envelope and writes nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    for (const body of ['{"version": 3,', '[]', '"config"', 'null', '42']) {
      const answer = await putRaw(server, body);
      assert.equal(answer.status, 400, body);
      assert.equal(typeof answer.body.message, 'string');
      assert.ok(Array.isArray(answer.body.details) && answer.body.details.length > 0, body);
    }
    assert.equal(
      (await putRaw(server, JSON.stringify({ host: { name: [] } }))).body.details[0],
      'version: must be 3 (the v16 config layout)',
    );
    assert.equal(await readFile(configFile, 'utf8'), before);
  });

  it('names every field of a wrong type, one detail each, and writes nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    let all: Record<string, unknown> = { version: 3 };
    for (const field of V16_FIELDS) {
      const wrong = WRONG[field.kind];
      const answer = await call<Envelope>(server, 'PUT', '/config', {
        version: 3,
        ...nest(field.path, wrong),
      });
      assert.equal(answer.status, 400, `${field.path}: ${answer.text}`);
      assert.equal(answer.body.message, 'Invalid config');
      assert.equal(answer.body.details.length, 1, `${field.path}: ${answer.text}`);
      assert.match(
        answer.body.details[0] ?? '',
        new RegExp(`^${field.path.replaceAll('.', '\\.')}: must be`),
      );
      all = mergeDeep(all, nest(field.path, wrong));
    }
    const answer = await call<Envelope>(server, 'PUT', '/config', all);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.details.length, V16_FIELDS.length, answer.text);
    // A section that is not an object.
    const section = await call<Envelope>(server, 'PUT', '/config', { version: 3, api: 5, rtmp: [] });
    assert.deepEqual(section.body.details, ['api: must be an object', 'rtmp: must be an object']);
    assert.equal(await readFile(configFile, 'utf8'), before);
  });

  it('validates values as the loader does, refuses promises it cannot keep, and writes nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    const answer = await call<Envelope>(server, 'PUT', '/config', {
      version: 3,
      address: 'nowhere',
      host: { name: ['http://example.com:80'] },
      api: { read_only: true, auth: { enable: true, password: '' } },
      tls: { enable: true },
      sessions: { ip_ignorelist: ['not-a-cidr'] },
    });
    assert.equal(answer.status, 400, answer.text);
    const details = answer.body.details.join('\n');
    for (const key of [
      'address',
      'host.name',
      'api.read_only',
      'api.auth.password',
      // HTTPS with neither tls.auto nor own certificate files.
      'tls.cert_file',
      'sessions.ip_ignorelist',
    ]) {
      assert.match(details, new RegExp(`^${key.replaceAll('.', '\\.')}: `, 'm'), key);
    }
    assert.equal(await readFile(configFile, 'utf8'), before);
  });

  it('refuses changes that would give a token the machine at the next start, and writes nothing', async () => {
    const before = await readFile(configFile, 'utf8');
    const shown = (await ok<ConfigAnswer>(server, 'GET', '/config')).config;
    const changes: Record<string, unknown> = {
      'ffmpeg.binary': '/bin/sh',
      'ffmpeg.access.input.allow': ['.*'],
      'ffmpeg.access.output.block': ['^never$'],
      'storage.disk.dir': '/',
      'db.dir': '/etc',
      'tls.key_file': '/etc/shadow',
      'api.auth.auth0.tenants': [
        { domain: 'idp.example', audience: 'a', clientid: 'c', users: ['intruder'] },
      ],
      // streamcore's own keys outside the v16 layout: refused too, not kept as unknown keys.
      'ffmpeg.sandbox': 'off',
      'ffmpeg.access.output.paths': ['/'],
      'events.webhooks': [{ url: 'http://hooks.example/', events: [], secret: 'a secret of the intruder' }],
      'events.allow_loopback_webhooks': true,
      'cluster.etcd.endpoints': ['http://etcd.intruder.example:2379'],
      'cluster.advertise_address': 'http://node.intruder.example',
    };
    let body: Record<string, unknown> = { version: 3 };
    for (const [path, value] of Object.entries(changes)) {
      assert.notDeepEqual(getPath(shown, path), value, `${path} is not already ${JSON.stringify(value)}`);
      body = mergeDeep(body, nest(path, value));
    }
    const answer = await call<Envelope>(server, 'PUT', '/config', body);
    assert.equal(answer.status, 400, answer.text);
    for (const path of Object.keys(changes)) {
      assert.ok(
        answer.body.details.some((detail) =>
          detail.startsWith(`${path}: can only be changed in the config file`),
        ),
        `${path}: ${answer.text}`,
      );
    }
    assert.equal(await readFile(configFile, 'utf8'), before);
    // The UI sends every key back as it got it: unchanged values of those keys pass.
    const roundTrip = await call(server, 'PUT', '/config', { ...shown, name: 'renamed-by-ui' });
    assert.equal(roundTrip.status, 200, roundTrip.text);
  });

  it('gives the UI the public host from host.name when it reaches the server by IP', async () => {
    const answer = await ok<ConfigAnswer>(server, 'GET', '/config');
    const port = new URL(server.url).port;
    assert.equal(uiPublicHost(server.url, answer.config), `tv.example.com:${port}`);
    assert.equal(
      uiPublicHost(`http://studio.example.org:${port}`, answer.config),
      `studio.example.org:${port}`,
    );
  });
});

describe('config reload', () => {
  const password = 'first-password-1';
  let server: TestServer;
  let buffer: LogBuffer;
  before(async () => {
    buffer = new LogBuffer(200);
    const discard = new Writable({ write: (_chunk, _encoding, done) => done() });
    server = await startServer({
      logger: createServerLogger('info', buffer, discard),
      logBuffer: buffer,
      config: { api: { auth: { enable: true, username: 'admin', password } } },
    });
  });
  after(() => server.close());

  async function login(user: string, pass: string): Promise<string | undefined> {
    const response = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: user, password: pass }),
    });
    if (response.status !== 200) return undefined;
    return ((await response.json()) as { access_token: string }).access_token;
  }

  async function api<T>(
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }

  it('applies new credentials and name while a real ffmpeg process keeps running', async () => {
    const token = await login('admin', password);
    assert.ok(token !== undefined);
    const process = {
      id: 'keeps-running',
      input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      options: ['-loglevel', 'info'],
      autostart: true,
    };
    assert.equal((await api(token, 'POST', '/api/v3/process', process)).status, 200);
    const running = await waitRunning(token);
    const aboutBefore = (await api<{ created_at: string; name: string }>(token, 'GET', '/api')).body;

    const newPassword = 'second-password-2';
    const change = {
      version: 3,
      name: 'renamed-core',
      api: { auth: { password: newPassword } },
      sessions: { enable: false },
    };
    assert.equal((await api(token, 'PUT', '/api/v3/config', change)).status, 200);
    const stored = (await api<ConfigAnswer>(token, 'GET', '/api/v3/config')).body;
    assert.ok(Date.parse(stored.updated_at) >= Date.parse(stored.loaded_at));
    // Stored, not yet in effect.
    assert.ok((await login('admin', password)) !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await api(token, 'GET', '/api/v3/config/reload')).status, 200);

    // The old token and password are refused, the new password logs in.
    assert.equal((await api(token, 'GET', '/api/v3/process')).status, 401);
    assert.equal(await login('admin', password), undefined);
    const newToken = await login('admin', newPassword);
    assert.ok(newToken !== undefined);
    const about = (await api<{ created_at: string; name: string }>(newToken, 'GET', '/api')).body;
    assert.equal(about.name, 'renamed-core');
    assert.notEqual(about.created_at, aboutBefore.created_at, 'the UI sees the restart it asked for');
    const after = (await api<ConfigAnswer>(newToken, 'GET', '/api/v3/config')).body;
    assert.ok(Date.parse(after.loaded_at) >= Date.parse(after.updated_at), 'no longer outdated');

    // The encoder is the same one, still running.
    const state = (
      await api<{ exec: string; pid: number }>(newToken, 'GET', '/api/v3/process/keeps-running/state')
    ).body;
    assert.equal(state.exec, 'running');
    assert.equal(state.pid, running.pid);

    const lines = buffer.lines().join('\n');
    assert.ok(!lines.includes(newPassword) && !lines.includes(password), 'no password in the log');
    // Every key of this change is one the UI shows: all in effect now, none left for the next start.
    assert.doesNotMatch(lines, /take effect at the next start/);
    assert.equal(server.config.sessions.enable, false);
    assert.equal((await api(newToken, 'DELETE', '/api/v3/process/keeps-running')).status, 200);
  });

  it('refuses to reload a file that no longer validates, and keeps running as it was', async () => {
    const token = await login('admin', 'second-password-2');
    assert.ok(token !== undefined);
    const file = join(server.dir, 'config.json');
    const good = await readFile(file, 'utf8');
    await writeFile(file, '{"address": ');
    const broken = await api<Envelope>(token, 'GET', '/api/v3/config/reload');
    assert.equal(broken.status, 400);
    assert.match(broken.body.details.join('\n'), /invalid JSON/);
    await writeFile(file, JSON.stringify({ ...JSON.parse(good), address: 'nowhere' }));
    const invalid = await api<Envelope>(token, 'GET', '/api/v3/config/reload');
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.details.join('\n'), /^address: /m);
    await writeFile(file, good);
    assert.equal((await api(token, 'GET', '/api/v3/process')).status, 200);
  });

  async function waitRunning(token: string): Promise<{ pid: number }> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const state = (
        await api<{ exec: string; pid: number; progress: { frame: number } }>(
          token,
          'GET',
          '/api/v3/process/keeps-running/state',
        )
      ).body;
      if (state.exec === 'running' && state.progress.frame > 0) return state;
      assert.ok(Date.now() < deadline, `process not running: ${JSON.stringify(state)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});

function mergeDeep(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const result = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = result[key];
    result[key] =
      typeof current === 'object' &&
      current !== null &&
      !Array.isArray(current) &&
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value)
        ? mergeDeep(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return result;
}
