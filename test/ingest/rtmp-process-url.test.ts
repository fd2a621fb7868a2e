import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultConfig } from '../../src/config/schema.js';
import { rtmpProcessUrl } from '../../src/ingest/rtmp-process-url.js';
import { replacePlaceholders, resolveConfig } from '../../src/process/config/placeholders.js';

describe('{rtmp} placeholder', () => {
  const options = { ...defaultConfig().rtmp, enable: true };

  it('builds the URL as the reference does, with app, token and the bound port', () => {
    assert.equal(rtmpProcessUrl(options, undefined, { name: 'x' }), 'rtmp://127.0.0.1:1935/x');
    assert.equal(
      rtmpProcessUrl({ ...options, address: '10.0.0.2:0', app: '/live', token: 'a b' }, 41_000, {
        name: 'x',
      }),
      'rtmp://10.0.0.2:41000/live/x?token=a%20b',
    );
    assert.equal(
      rtmpProcessUrl({ ...options, address: '[::1]:1935' }, undefined, {}),
      'rtmp://[::1]:1935/{name}',
    );
  });

  it('expands {name,params} in inputs and outputs, with URL-unescaped values and $variables', () => {
    const seen: string[] = [];
    const templates = {
      rtmp: (params: Readonly<Record<string, string>>, section: string) => {
        seen.push(section);
        return `rtmp://h/${params.name ?? '?'}`;
      },
    };
    assert.equal(replacePlaceholders('{rtmp,name=a%2Cb}', {}, templates), 'rtmp://h/a,b');
    assert.equal(
      replacePlaceholders('{rtmp,name=$processid}', { processid: 'p1' }, templates),
      'rtmp://h/p1',
    );
    assert.equal(replacePlaceholders('{rtmp^:,name=x}', {}, templates), 'rtmp\\://h/x');
    assert.equal(replacePlaceholders('{unknown,name=x}', {}, templates), '{unknown,name=x}');
    assert.equal(replacePlaceholders('{constructor,name=x}', {}, templates), '{constructor,name=x}');
    const resolved = resolveConfig(
      {
        id: 'p',
        reference: '',
        input: [{ id: 'in', address: '{rtmp,name=in}', options: [], cleanup: [] }],
        output: [{ id: 'out', address: '{rtmp,name=out}', options: [], cleanup: [] }],
        options: [],
      } as unknown as Parameters<typeof resolveConfig>[0],
      { diskfs: '/d', memfs: 'http://m', templates },
    );
    assert.equal(resolved.input[0]?.address, 'rtmp://h/in');
    assert.equal(resolved.output[0]?.address, 'rtmp://h/out');
    assert.deepEqual(seen.slice(-2), ['input', 'output']);
  });
});
