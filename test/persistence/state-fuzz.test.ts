import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { seededRandom } from '../helpers/seeded-random.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 10, "How it is checked": the process, metadata and filesystem routes get deep nesting,
 * huge ids, lone surrogates and long names from a seeded generator. No answer may be a 5xx, and
 * after every few requests `db.json` must hold exactly what the API acknowledged (a model updated
 * from the 200 answers only): the process ids, their metadata and the server's metadata.
 */

const SEED = 0x5eed10;
const OPERATIONS = 360;
const CHECK_EVERY = 12;

type Random = () => number;

interface Model {
  processes: Map<string, Record<string, unknown>>;
  system: Record<string, unknown>;
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A string of `length` characters from an alphabet that includes what routers and file systems dislike. */
function hostileText(random: Random, length: number): string {
  const alphabet = [
    'a',
    'Z',
    '9',
    '-',
    '_',
    '.',
    ' ',
    'ü',
    '字',
    '😀',
    '%',
    '?',
    '#',
    '"',
    '\\',
    "'",
    '\u0000',
    '\u001f',
    '\u007f',
    '\ud800',
    '\udfff',
    '/',
  ];
  let text = '';
  for (let i = 0; i < length; i++) text += pick(random, alphabet);
  return text;
}

/** A process id: mostly plain, sometimes empty, dotted, slashed, huge or with surrogates. */
function processId(random: Random): string {
  const plain = `p${Math.floor(random() * 40)}`;
  return pick(random, [
    plain,
    plain,
    plain,
    '',
    '.',
    '..',
    `${plain}/x`,
    `${plain}\ud800`,
    `${plain}\u0001`,
    `ü-${plain}-字😀`,
    'x'.repeat(900 + Math.floor(random() * 300)),
    hostileText(random, 1 + Math.floor(random() * 20)),
  ]);
}

/** A JSON value: nested up to 6 000 levels, long strings, surrogates in keys and values. */
function hostileValue(random: Random): unknown {
  const kind = Math.floor(random() * 7);
  if (kind === 0) return null;
  if (kind === 1) return hostileText(random, Math.floor(random() * 40));
  if (kind === 2) return 'v'.repeat(Math.floor(random() * 1_300_000));
  if (kind === 3) {
    // Encoded as text: a value 6 000 levels deep overflows JSON.stringify's stack here, as it did
    // in the server's db writer before the depth bound.
    const depth = pick(random, [2, 31, 32, 33, 200, 6000]);
    const open = random() < 0.5 ? '[' : '{"k":';
    return new EncodedJson(`${open.repeat(depth)}"leaf"${(open === '[' ? ']' : '}').repeat(depth)}`, depth);
  }
  if (kind === 4) return { [hostileText(random, 5)]: hostileText(random, 5), n: random() };
  if (kind === 5)
    return Object.fromEntries(Array.from({ length: pick(random, [3, 999, 1001]) }, (_, i) => [`k${i}`, i]));
  return [1, 'two', { three: [3] }, true];
}

/** A JSON text sent as it is; `depth` levels of nesting. */
class EncodedJson {
  constructor(
    readonly text: string,
    readonly depth: number,
  ) {}
}

/** The value a JSON body stands for, as the model keeps it. */
function modelValue(value: unknown): unknown {
  if (!(value instanceof EncodedJson)) return value;
  assert.ok(value.depth <= 32, `a value ${value.depth} levels deep was acknowledged (the bound is 32)`);
  return JSON.parse(value.text);
}

/** A metadata key: plain, long, or one no URL can carry. */
function metadataKey(random: Random): string {
  return pick(random, [
    'note',
    'ui',
    `k${Math.floor(random() * 5)}`,
    'x'.repeat(300),
    'ü字',
    hostileText(random, 6),
  ]);
}

/** Percent-encodes a path segment; lone surrogates become the bytes of an invalid UTF-8 sequence. */
function segment(text: string): string {
  // Clients resolve a literal `.` or `..` segment before sending (`/process/../metadata` is
  // `/metadata`); encoded, it reaches the server as the id it is.
  if (text === '.' || text === '..') return text.replaceAll('.', '%2E');
  let encoded = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    encoded +=
      code >= 0xd800 && code <= 0xdfff
        ? `%ED%${(0xa0 + ((code >> 6) & 0x1f)).toString(16)}%${(0x80 + (code & 0x3f)).toString(16)}`
        : encodeURIComponent(char);
  }
  return encoded;
}

describe('state fuzz: hostile ids, values and names never answer 5xx, and db.json equals what was acknowledged', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
  });
  after(() => server.close());

  it(`${OPERATIONS} seeded operations (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    const model: Model = { processes: new Map(), system: {} };
    const statuses = new Map<number, number>();

    /** A JSON body, or with `raw` the bytes of a file. Sent with node:http, which sends the path as it is (fetch resolves dot segments, encoded ones too). */
    const send = async (method: string, path: string, body?: unknown, raw = false): Promise<number> => {
      const payload =
        body === undefined
          ? undefined
          : Buffer.from(
              raw ? (body as string) : body instanceof EncodedJson ? body.text : JSON.stringify(body),
            );
      const response = await rawRequest(server.url, method, path, payload, !raw);
      const text = response.text;
      assert.ok(
        response.status < 500,
        `${method} ${path.slice(0, 120)} answered ${response.status}: ${text.slice(0, 300)}`,
      );
      if (response.status >= 400 && response.status !== 404 && response.status !== 405) {
        assert.match(response.contentType, /json/, `${method} ${path.slice(0, 80)}: envelope`);
        assert.equal((JSON.parse(text) as { code: number }).code, response.status);
      }
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      return response.status;
    };
    const known = (): string[] => [...model.processes.keys()];
    const someId = (): string =>
      known().length > 0 && random() < 0.8 ? pick(random, known()) : processId(random);
    const processPath = (id: string): string => `/api/v3/process/${segment(id)}`;

    for (let operation = 1; operation <= OPERATIONS; operation++) {
      const action = Math.floor(random() * 8);
      if (action === 0 || action === 1) {
        const id = processId(random);
        const status = await send('POST', '/api/v3/process', processBody(id));
        if (status === 200) model.processes.set(id, {});
      } else if (action === 2) {
        const id = someId();
        const next = random() < 0.5 ? id : processId(random);
        const status = await send('PUT', processPath(id), processBody(next));
        if (status === 200) {
          const metadata = model.processes.get(id) ?? {};
          model.processes.delete(id);
          model.processes.set(next, metadata);
        }
      } else if (action === 3) {
        const id = someId();
        if ((await send('DELETE', processPath(id))) === 200) model.processes.delete(id);
      } else if (action === 4 || action === 5) {
        const id = someId();
        const key = metadataKey(random);
        const value = hostileValue(random);
        const status = await send('PUT', `${processPath(id)}/metadata/${segment(key)}`, value);
        if (status === 200) {
          const metadata = model.processes.get(id);
          assert.ok(
            metadata !== undefined,
            `metadata of a process the API never acknowledged: ${JSON.stringify(id)}`,
          );
          if (value === null) delete metadata[key];
          else metadata[key] = modelValue(value);
        }
      } else if (action === 6) {
        const key = metadataKey(random);
        const value = hostileValue(random);
        if ((await send('PUT', `/api/v3/metadata/${segment(key)}`, value)) === 200) {
          if (value === null) delete model.system[key];
          else model.system[key] = modelValue(value);
        }
      } else {
        const name = pick(random, [
          'ok.txt',
          'n'.repeat(300),
          'd/'.repeat(60) + 'f',
          hostileText(random, 12),
          'x'.repeat(5000),
        ]);
        const base = random() < 0.5 ? '/memfs/' : '/';
        const status = await send(
          'PUT',
          `${base}${segment(name).replaceAll('%2F', '/')}`,
          hostileText(random, 30),
          true,
        );
        if (status >= 200 && status < 300)
          await send('GET', `${base}${segment(name).replaceAll('%2F', '/')}`);
      }
      if (operation % CHECK_EVERY === 0 || operation === OPERATIONS)
        await assertSaved(server, model, operation);
    }
    // The hostile cases were reached: refusals happened, and so did acknowledged changes.
    assert.ok((statuses.get(400) ?? 0) > 20, JSON.stringify([...statuses]));
    assert.ok((statuses.get(200) ?? 0) > 50, JSON.stringify([...statuses]));
    assert.equal(await (await fetch(`${server.url}/ping`)).text(), 'pong');
  });
});

async function rawRequest(
  base: string,
  method: string,
  path: string,
  payload: Buffer | undefined,
  json: boolean,
): Promise<{ status: number; contentType: string; text: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers:
          payload === undefined
            ? {}
            : { 'content-length': payload.length, ...(json ? { 'content-type': 'application/json' } : {}) },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            contentType: String(incoming.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

function processBody(id: string): Record<string, unknown> {
  return {
    id,
    input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    autostart: false,
  };
}

interface DbFile {
  process?: Record<string, unknown>;
  metadata?: { process?: Record<string, Record<string, unknown>>; system?: Record<string, unknown> };
}

/** db.json holds exactly the acknowledged processes and metadata. */
async function assertSaved(server: TestServer, model: Model, operation: number): Promise<void> {
  const db = JSON.parse(await readFile(join(server.config.db.dir, 'db.json'), 'utf8')) as DbFile;
  const where = `after operation ${operation}`;
  assert.deepEqual(Object.keys(db.process ?? {}).sort(), known(model), `${where}: process ids`);
  for (const [id, metadata] of model.processes) {
    assert.deepEqual(db.metadata?.process?.[id] ?? {}, metadata, `${where}: metadata of ${id.slice(0, 40)}`);
  }
  assert.deepEqual(db.metadata?.system ?? {}, model.system, `${where}: server metadata`);
}

function known(model: Model): string[] {
  return [...model.processes.keys()].sort();
}
