import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../helpers/seeded-random.js';
import { publishSrt, SRT_SKIP, srtAddon, srtUrl, startSrt } from './srt-support.js';

interface StreamId {
  resource: string;
  mode: string;
  token: string;
}

/**
 * datarhei Core's parseStreamId (srt/srt.go, v16.14.0) transcribed as the oracle: the resource
 * runs to the first ",token:" or ",mode:" followed by something, each value to the next such key
 * (or a newline, Go's '.'); the "#!:" form splits at commas into m=, r=, token=. The one chosen
 * difference: "#!::" (the SRT access-control form) is read like "#!:".
 */
function referenceParse(text: string): StreamId {
  if (text.startsWith('#!:')) {
    const id = { resource: '', mode: '', token: '' };
    for (const pair of text.slice(text.startsWith('#!::') ? 4 : 3).split(',')) {
      const equals = pair.indexOf('=');
      if (equals < 0) continue;
      const [key, value] = [pair.slice(0, equals), pair.slice(equals + 1)];
      if (key === 'm') id.mode = value;
      if (key === 'r') id.resource = value;
      if (key === 'token') id.token = value;
    }
    return id;
  }
  const pattern = /,(token|mode):([^\n]+)/;
  const values: Record<string, string> = {};
  let rest = text;
  let key = '';
  let resourceEnd = -1;
  for (let match = pattern.exec(rest); match !== null; match = pattern.exec(rest)) {
    if (resourceEnd < 0) resourceEnd = match.index;
    if (key !== '') values[key] = rest.slice(0, match.index);
    key = match[1] ?? '';
    rest = match[2] ?? '';
    values[key] = rest;
  }
  return {
    resource: resourceEnd < 0 ? text : text.slice(0, resourceEnd),
    mode: values.mode ?? 'request',
    token: values.token ?? '',
  };
}

const PIECES = [
  ',',
  ':',
  'mode',
  'token',
  ',mode:',
  ',token:',
  'publish',
  'request',
  '=',
  'm=',
  'r=',
  '#!:',
  '#!::',
  '\n',
  'a',
  'Z',
  '9',
  '.',
  '/',
  'ü',
  '🎥',
  ' ',
  '%2C',
];

function randomId(random: () => number, maxPieces: number): string {
  let id = '';
  const count = Math.floor(random() * maxPieces);
  for (let i = 0; i < count; i++) id += PIECES[Math.floor(random() * PIECES.length)] ?? '';
  return id;
}

describe('SRT stream ids', { skip: SRT_SKIP }, () => {
  it('parses the forms the reference accepts, as its own tests expect', () => {
    const { parseStreamId } = srtAddon();
    const cases: [string, StreamId][] = [
      ['bla', { resource: 'bla', mode: 'request', token: '' }],
      ['bla,mode:publish', { resource: 'bla', mode: 'publish', token: '' }],
      ['123456789', { resource: '123456789', mode: 'request', token: '' }],
      ['bla,token:foobar', { resource: 'bla', mode: 'request', token: 'foobar' }],
      ['bla,token:foo,bar', { resource: 'bla', mode: 'request', token: 'foo,bar' }],
      ['123456789,mode:publish,token:foobar', { resource: '123456789', mode: 'publish', token: 'foobar' }],
      ['mode:publish', { resource: 'mode:publish', mode: 'request', token: '' }],
      ['x.stream,mode:request,token:a:b', { resource: 'x.stream', mode: 'request', token: 'a:b' }],
      ['#!:', { resource: '', mode: '', token: '' }],
      ['#!:key=value', { resource: '', mode: '', token: '' }],
      ['#!:m=publish', { resource: '', mode: 'publish', token: '' }],
      ['#!:r=123456789', { resource: '123456789', mode: '', token: '' }],
      ['#!:token=foo,bar', { resource: '', mode: '', token: 'foo' }],
      ['#!:m=publish,r=123456789,token=foobar', { resource: '123456789', mode: 'publish', token: 'foobar' }],
      ['#!::r=abc,m=request', { resource: 'abc', mode: 'request', token: '' }],
    ];
    for (const [text, expected] of cases) assert.deepEqual({ ...parseStreamId(text) }, expected, text);
  });

  it('agrees with the reference algorithm on 5000 random ids', () => {
    const { parseStreamId } = srtAddon();
    const random = seededRandom(0x5eed_5a7);
    for (let i = 0; i < 5000; i++) {
      const text = randomId(random, 12);
      assert.deepEqual({ ...parseStreamId(text) }, referenceParse(text), JSON.stringify(text));
    }
  });

  it('decides fuzzed stream ids over the wire as the reference would, and keeps serving', async () => {
    const { server, port, logs } = await startSrt({ token: 'tok' });
    try {
      const random = seededRandom(0xf022);
      // ffmpeg passes srt:// options raw up to '&', and libsrt takes at most 512 bytes.
      const urlSafe = PIECES.filter((piece) => /^[\x21-\x7e]+$/.test(piece) && piece !== '%2C');
      let accepted = 0;
      for (let i = 0; i < 16; i++) {
        let id = '';
        for (let k = Math.floor(random() * 8); k > 0; k--)
          id += urlSafe[Math.floor(random() * urlSafe.length)];
        // Half of them publish with the right token, so both outcomes occur.
        if (i % 2 === 0) id += ',mode:publish,token:tok';
        const expected = referenceParse(id);
        const wanted = expected.resource !== '' && expected.mode === 'publish' && expected.token === 'tok';
        const result = await publishSrt(srtUrl(port, id), 0.3).done;
        assert.equal(result.code === 0, wanted, `${JSON.stringify(id)}: ${result.stderr}`);
        if (wanted) accepted++;
      }
      assert.ok(accepted >= 3, `only ${accepted} fuzzed ids were accepted`);
      assert.equal(logs.filter((line) => line.includes(' start')).length, accepted);
      const last = await publishSrt(srtUrl(port, 'after,mode:publish,token:tok'), 0.5).done;
      assert.equal(last.code, 0, last.stderr);
    } finally {
      server.close();
    }
  });
});
