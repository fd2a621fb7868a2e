import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from '../storage/raw-request.js';

const SECRET = 'outside-the-ui-directory';

describe('router: the UI build at /ui/, directory routes and redirects (router.*)', () => {
  let server: TestServer;
  let scratch: string;
  let ui: string;
  let docs: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'streamcore-router-'));
    ui = join(scratch, 'ui');
    docs = join(scratch, 'docs');
    await mkdir(join(ui, 'static', 'js'), { recursive: true });
    await mkdir(docs);
    await writeFile(join(ui, 'index.html'), '<!doctype html><title>ui</title>');
    await writeFile(join(ui, 'static', 'js', 'main.js'), 'console.log(1);\n'.repeat(100));
    await writeFile(join(scratch, 'secret.txt'), SECRET);
    // A link out of the served directory must not lead out of it.
    await symlink(join(scratch, 'secret.txt'), join(ui, 'link.txt'));
    await writeFile(join(docs, 'page.html'), '<p>docs</p>');
    server = await startServer({
      config: {
        api: { auth: { enable: true, username: 'admin', password: 'router-test-pass' } },
        // `ui` relative to the config file's directory (the server's working directory in tests).
        router: { ui_path: ui, routes: { '/': '/ui/', '/docs/*': docs, '/old': '/ui/static/../' } },
      },
    });
    await writeFile(join(server.dir, 'data', 'player.html'), '<p>disk</p>');
  });
  after(async () => {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('redirects /ui to /ui/ (query kept) and serves index.html there, with the UI policy, not the sandbox', async () => {
    const bare = await fetch(`${server.url}/ui?address=x`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), '/ui/?address=x');
    const index = await fetch(`${server.url}/ui/`);
    assert.equal(index.status, 200);
    assert.equal(await index.text(), '<!doctype html><title>ui</title>');
    assert.match(index.headers.get('content-type') ?? '', /^text\/html/);
    const policy = index.headers.get('content-security-policy') ?? '';
    assert.doesNotMatch(policy, /sandbox/);
    assert.match(policy, /frame-ancestors 'self'/);
    assert.equal(index.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(index.headers.get('cache-control'), 'no-cache');
  });

  it('serves the build files with their type, HEAD and ranges', async () => {
    const script = await fetch(`${server.url}/ui/static/js/main.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal((await script.text()).length, 1600);
    const head = await fetch(`${server.url}/ui/static/js/main.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '1600');
    const part = await fetch(`${server.url}/ui/static/js/main.js`, {
      headers: { range: 'bytes=0-6', 'accept-encoding': 'identity' },
    });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), 'console');
  });

  it('never leaves the directory: dot segments, encoded ones and symlinks are 404s', async () => {
    for (const path of [
      '/ui/../secret.txt',
      '/ui/%2e%2e/secret.txt',
      '/ui/..%2fsecret.txt',
      '/ui/%2e%2e%2f%2e%2e%2fetc/passwd',
      '/ui/link.txt',
      '/ui/missing.js',
      '/docs/..%2f..%2fsecret.txt',
    ]) {
      const answer = await rawRequest(server.url, path);
      assert.ok(answer.status === 404 || answer.status === 400, `${path}: ${answer.status}`);
      assert.ok(!answer.body.toString().includes(SECRET), path);
    }
    const missing = await fetch(`${server.url}/ui/missing.js`);
    assert.equal(((await missing.json()) as { code: number }).code, 404);
  });

  it('serves a `/path/*` route as user files (sandboxed) and redirects the plain routes', async () => {
    const page = await fetch(`${server.url}/docs/page.html`);
    assert.equal(page.status, 200);
    assert.equal(await page.text(), '<p>docs</p>');
    assert.match(page.headers.get('content-security-policy') ?? '', /^sandbox /);
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 301);
    assert.equal(root.headers.get('location'), '/ui/');
    const old = await fetch(`${server.url}/old`, { redirect: 'manual' });
    assert.equal(old.headers.get('location'), '/ui/');
  });

  it('leaves the disk filesystem, the API and its guard as they were', async () => {
    const disk = await fetch(`${server.url}/player.html`);
    assert.equal(await disk.text(), '<p>disk</p>');
    assert.equal((await fetch(`${server.url}/api/v3/process`)).status, 401);
    assert.equal((await fetch(`${server.url}/ui/`, { method: 'POST' })).status, 404);
  });

  it('keeps router.* out of the config API: answered, sent back unchanged passes, a change is refused', async () => {
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'router-test-pass' }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const shown = (await (await fetch(`${server.url}/api/v3/config`, { headers })).json()) as {
      config: { router: { ui_path: string; routes: Record<string, string>; blocked_prefixes: string[] } };
    };
    assert.equal(shown.config.router.ui_path, ui);
    assert.equal(shown.config.router.routes['/docs/*'], docs);
    assert.deepEqual(shown.config.router.blocked_prefixes, ['/api']);
    const echo = await fetch(`${server.url}/api/v3/config`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(shown.config),
    });
    assert.equal(echo.status, 200);
    for (const change of [{ ui_path: '/etc' }, { routes: { '/etc/*': '/etc' } }, { blocked_prefixes: [] }]) {
      const answer = await fetch(`${server.url}/api/v3/config`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ version: 3, router: change }),
      });
      assert.equal(answer.status, 400, JSON.stringify(change));
      const body = (await answer.json()) as { details: string[] };
      assert.match(body.details.join('\n'), /^router\.\w+: can only be changed in the config file/m);
    }
    const file = JSON.parse(await readFile(join(server.dir, 'config.json'), 'utf8')) as {
      router: { ui_path: string };
    };
    assert.equal(file.router.ui_path, ui);
  });
});

describe('router: a bad route or directory stops the start, naming the key', () => {
  const cases: {
    name: string;
    router: Record<string, unknown>;
    env?: Record<string, string>;
    error: RegExp;
  }[] = [
    {
      name: 'a route under a blocked prefix',
      router: { routes: { '/apix': '/x' } },
      error: /router\.routes: "\/apix" starts with the blocked prefix "\/api"/,
    },
    {
      name: 'a route under /ui while ui_path is set',
      router: { ui_path: '.', routes: { '/ui/x': '/' } },
      error: /"\/ui\/x" starts with the blocked prefix "\/ui"/,
    },
    {
      name: 'a route the server serves itself',
      router: { blocked_prefixes: [], routes: { '/memfs/*': '.' } },
      error: /lies under "\/memfs", which streamcore serves itself/,
    },
    {
      name: 'a redirect to a relative target',
      router: { routes: { '/a': 'b.html' } },
      error: /"\/a" must redirect to a path starting with "\/"/,
    },
    {
      name: 'a redirect to another host',
      router: { routes: { '/a': '/\\evil.example' } },
      error: /"\/a" must redirect to a path/,
    },
    {
      name: 'a ui_path that does not exist',
      router: { ui_path: './no-such-dir' },
      error: /router\.ui_path: ".*no-such-dir" cannot be read \(ENOENT\)/,
    },
    {
      name: 'a route from the env',
      router: {},
      env: { CORE_ROUTER_ROUTES: '/:/ui/ /api/x/*:.' },
      error: /"\/api\/x\/\*" starts with the blocked prefix/,
    },
  ];
  for (const { name, router, env, error } of cases) {
    it(name, async () => {
      await assert.rejects(startServer({ config: { router }, env }), error);
    });
  }
});
