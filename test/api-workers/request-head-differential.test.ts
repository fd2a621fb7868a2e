import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { scanRequestHead } from '../../src/api-workers/request-head.js';
import { seededRandom } from '../helpers/seeded-random.js';

/**
 * An API worker frames each request with its own head scanner (request-head.ts) before it decides
 * whether to answer it or to hand the connection, with the bytes after that request, to the main
 * process. Were the scanner to end a request somewhere else than node's parser (llhttp) does, the
 * two processes would read different requests out of the same bytes: the classic request
 * smuggling between two parsers. So for random heads, tricky ones included (repeated and malformed
 * lengths, transfer codings, folded and bare-LF lines, odd bytes, absolute targets), every head the
 * scanner frames itself must be framed alike by node's parser: same method, target and header
 * values, and a second request that starts exactly where the scanner says the first one ends.
 */

interface Parsed {
  method: string;
  rawHeaders: string[];
  httpVersionMinor: number;
  url: string;
  headers: IncomingMessage['headers'];
  bodyLength: number;
}

const SECOND = 'GET /second HTTP/1.1\r\nhost: x\r\n\r\n';

/** What node's parser made of the requests on each connection, by the client's port. */
const seen = new Map<number, Parsed[]>();
// Without the Host check (a 400 before the handler): every request llhttp frames reaches the handler.
const server = createServer({ requireHostHeader: false }, (request, response) => {
  // Recorded as soon as the head is parsed: a body llhttp cannot finish (a transfer coding the
  // scanner missed) stays at -1, which no scan answers.
  const parsed: Parsed = {
    method: request.method ?? '',
    rawHeaders: request.rawHeaders,
    httpVersionMinor: request.httpVersionMinor,
    url: request.url ?? '',
    headers: request.headers,
    bodyLength: -1,
  };
  const list = seen.get(request.socket.remotePort ?? 0) ?? [];
  list.push(parsed);
  seen.set(request.socket.remotePort ?? 0, list);
  let bodyLength = 0;
  request.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
  request.on('end', () => {
    parsed.bodyLength = bodyLength;
    response.end('ok');
  });
});
let port = 0;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `bytes` on a new connection and answers what node's parser read from them. */
async function parse(bytes: Buffer): Promise<Parsed[]> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const clientPort = socket.localPort ?? 0;
  seen.delete(clientPort);
  // Two answers, or the server closed (a 400, `Connection: close`), or nothing more in 0.5 s.
  await new Promise<void>((resolve) => {
    let answers = '';
    const timer = setTimeout(resolve, 500);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      answers += chunk.toString('latin1');
      if ((answers.match(/HTTP\/1\.1 /g) ?? []).length >= 2) done();
    });
    socket.on('close', done);
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
  socket.destroy();
  return seen.get(clientPort) ?? [];
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];
const ODD_METHODS = ['get', 'G ET', 'PATCH', 'M-SEARCH', ''];
const TARGETS = ['/api/login', '/api/v3/metrics?x=1', '/%zz', '/'];
const ODD_TARGETS = [
  'http://x/api/login',
  '*',
  '/a b',
  '/é',
  '//x',
  'api/login',
  '/a"{|}<>^`\\b',
  '/#x',
  '/?a#b',
];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'];
const ODD_VERSIONS = ['HTTP/2.0', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1.10', 'HTTP/1'];
const NAMES = [
  'content-type',
  'x-a',
  'x-b',
  'accept',
  'Content-Length',
  'content-length',
  'Transfer-Encoding',
  'Connection',
];
const ODD_NAMES = [
  'content-length ',
  'Content_Length',
  'x a',
  'Expect',
  'Upgrade',
  'content-encoding',
  '',
  'x-é',
];
const VALUES = ['x', 'application/json', ' padded ', '\tx\t', 'a,b', 'é', ''];
const ODD_VALUES = ['\x7f', 'a\x00b', 'a\rb', 'close', 'keep-alive'];
const ODD_LENGTHS = ['003', '+3', '-1', ' 3', '3 ', '3, 3', '', '99999999999', 'x', '0x3', '3.0'];
const CODINGS = ['chunked', 'gzip, chunked', 'identity', 'chunked, gzip'];

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

/**
 * A request (head and body): with a 60 % chance a well-formed one (the scanner's own ground),
 * otherwise with odd pieces anywhere: line ends, request line, names, separators, values, lengths.
 */
function randomRequest(random: () => number): Buffer {
  const tricky = random() < 0.4;
  const odd = (chance: number): boolean => tricky && random() < chance;
  const method = odd(0.2) ? pick(random, ODD_METHODS) : pick(random, METHODS);
  const target = odd(0.2) ? pick(random, ODD_TARGETS) : pick(random, TARGETS);
  const version = odd(0.2) ? pick(random, ODD_VERSIONS) : pick(random, VERSIONS);
  let bodyLength = Math.floor(random() * 10);
  const lines = [`${method} ${target} ${version}`];
  if (random() < 0.8) lines.push('host: x');
  const names = new Set<string>();
  const count = Math.floor(random() * 4);
  for (let i = 0; i < count; i++) {
    const name = odd(0.3) ? pick(random, ODD_NAMES) : pick(random, NAMES);
    if (names.has(name.toLowerCase()) && !odd(0.5)) continue;
    names.add(name.toLowerCase());
    let value: string;
    if (/^content-length$/i.test(name)) {
      value = odd(0.6) ? pick(random, ODD_LENGTHS) : String(bodyLength);
      if (value !== String(bodyLength) && random() < 0.5) bodyLength = Math.floor(random() * 10);
    } else if (/^transfer-encoding$/i.test(name)) value = pick(random, CODINGS);
    else value = odd(0.3) ? pick(random, ODD_VALUES) : pick(random, VALUES);
    const separator = odd(0.3) ? pick(random, [':', ' : ', ':\t', '']) : ': ';
    lines.push(`${name}${separator}${value}`);
    if (odd(0.05)) lines.push(' folded');
  }
  const end = (): string => (odd(0.1) ? pick(random, ['\n', '\r', '\r\n']) : '\r\n');
  const head = lines.map((line) => line + end()).join('') + end();
  return Buffer.from(head + 'b'.repeat(bodyLength), 'latin1');
}

describe("the API worker's head scanner against node's HTTP parser", () => {
  it('frames every request it frames itself exactly as llhttp does (2 000 random heads)', async () => {
    const random = seededRandom(31);
    let framed = 0;
    for (let round = 0; round < 2000; round++) {
      const first = randomRequest(random);
      const bytes = Buffer.concat([first, Buffer.from(SECOND)]);
      const scan = scanRequestHead(bytes);
      if (scan.kind !== 'request') continue;
      // What the worker would keep as one request, the rest being the next one.
      const length = scan.headLength + scan.bodyLength;
      if (length > bytes.length) continue;
      const parsed = await parse(bytes);
      const context = `round ${round}: ${JSON.stringify(first.toString('latin1'))}`;
      // The worker answers what it frames without llhttp reading it again (socket-exchange.ts):
      // a head llhttp would refuse with a 400 must not be framed.
      assert.ok(parsed.length > 0, `${context}: framed by the scanner, refused by llhttp`);
      framed++;
      const [request, next] = parsed;
      assert.equal(request!.method, scan.method, context);
      assert.equal(request!.url, scan.target, context);
      assert.equal(request!.bodyLength, scan.bodyLength, context);
      for (const [name, value] of scan.headers)
        assert.equal(request!.headers[name], value, `${context}: ${name}`);
      assert.deepEqual(request!.rawHeaders, scan.rawHeaders, `${context}: raw headers`);
      assert.equal(request!.httpVersionMinor, scan.minorVersion, `${context}: version`);
      // Where the scanner's request ends, the second one begins (when the body was as long as
      // its Content-Length said); llhttp must read it there too, unless the first closed.
      const text = first.toString('latin1');
      const closes = /^connection:\s*close/im.test(text) || / HTTP\/1\.0\r\n/.test(text);
      if (!closes && bytes.subarray(length).toString('latin1') === SECOND) {
        assert.equal(next?.url, '/second', `${context}: the next request starts where the scanner said`);
      }
    }
    // The generator must reach the scanner's own framing often enough to mean something.
    assert.ok(framed > 200, `only ${framed} heads framed`);
  });

  it("leaves heads near node's bounds to the main process: 8 KiB and 500 header lines", () => {
    const head = (lines: string[]): Buffer =>
      Buffer.from(['GET / HTTP/1.1', 'host: x', ...lines].join('\r\n') + '\r\n\r\n', 'latin1');
    assert.equal(scanRequestHead(head([`x-a: ${'a'.repeat(8000)}`])).kind, 'request');
    assert.equal(scanRequestHead(head([`x-a: ${'a'.repeat(8200)}`])).kind, 'unsure');
    // Unique names (a repeated one is refused for itself): node keeps the first 2 000 lines only.
    const names = (count: number): string[] => Array.from({ length: count }, (_, i) => `x-${i}: v`);
    assert.equal(scanRequestHead(head(names(499))).kind, 'request');
    assert.equal(scanRequestHead(head(names(500))).kind, 'unsure');
  });
});
