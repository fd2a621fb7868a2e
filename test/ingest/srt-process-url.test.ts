import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { defaultConfig } from '../../src/config/schema.js';
import { validateConfig } from '../../src/config/validate.js';
import { createSrtIngest } from '../../src/ingest/srt-ingest.js';
import { loadSrtAddon } from '../../src/ingest/srt/index.js';
import { srtProcessUrl } from '../../src/ingest/srt-process-url.js';
import { Lifecycle } from '../../src/lifecycle/lifecycle.js';
import { replacePlaceholders, type PlaceholderTemplate } from '../../src/process/config/placeholders.js';
import { ServedCertificate } from '../../src/tls/index.js';

describe('{srt} placeholder', () => {
  const options = { ...defaultConfig().srt, enable: true };

  it('builds the caller URL as the reference does, the mode from the parameter or the section', () => {
    assert.equal(
      srtProcessUrl(options, undefined, { name: 'x', mode: 'publish' }, 'input'),
      'srt://127.0.0.1:6000?mode=caller&transtype=live&latency=20000&streamid=x,mode:publish',
    );
    assert.equal(
      srtProcessUrl(options, undefined, { name: 'x' }, 'output'),
      'srt://127.0.0.1:6000?mode=caller&transtype=live&latency=20000&streamid=x,mode:publish',
    );
    assert.equal(
      srtProcessUrl(options, undefined, { name: 'x', mode: 'bogus' }, 'input'),
      'srt://127.0.0.1:6000?mode=caller&transtype=live&latency=20000&streamid=x,mode:request',
    );
    assert.equal(
      srtProcessUrl(
        { ...options, address: '[::1]:0', token: 'se,cret', passphrase: 'long-enough-pass' },
        41_000,
        { name: 'cam.stream', mode: 'request', latency: '120000' },
        'input',
      ),
      'srt://[::1]:41000?mode=caller&transtype=live&latency=120000&streamid=cam.stream,mode:request' +
        ',token:se,cret&passphrase=long-enough-pass',
    );
    assert.equal(
      srtProcessUrl(options, undefined, {}, 'global'),
      'srt://127.0.0.1:6000?mode=caller&transtype=live&latency=20000&streamid={name},mode:request',
    );
  });

  it('is what {srt,name=…,mode=…} in a process address expands to', () => {
    const templates: Record<string, PlaceholderTemplate> = {
      srt: (params, section) => srtProcessUrl(options, 7000, params, section),
    };
    assert.equal(
      replacePlaceholders('{srt,name=$processid,mode=publish}', { processid: 'p1' }, templates, 'output'),
      'srt://127.0.0.1:7000?mode=caller&transtype=live&latency=20000&streamid=p1,mode:publish',
    );
  });
});

describe('srt config', () => {
  it('checks address, passphrase length and characters ffmpeg cannot pass', () => {
    const config = defaultConfig();
    config.srt = { ...config.srt, enable: true, address: 'nope', passphrase: 'short', token: 'a&b' };
    assert.deepEqual(
      validateConfig(config).filter((problem) => problem.startsWith('srt.')),
      [
        'srt.address: must be "host:port" or ":port", got "nope"',
        'srt.passphrase: must be empty or 10 to 79 characters, got 5',
        'srt.token: must not contain "&", "#" or white space',
      ],
    );
    config.srt = { ...config.srt, address: ':6000', passphrase: 'ten chars!', token: 'ok' };
    assert.deepEqual(
      validateConfig(config).filter((problem) => problem.startsWith('srt.')),
      ['srt.passphrase: must not contain "&", "#" or white space'],
    );
  });

  it('fails start-up naming srt.enable where the addon is not built, and ignores it when off', () => {
    const deps = {
      logger: pino({ level: 'silent' }),
      now: Date.now,
      lifecycle: new Lifecycle(),
      rtmpCollector: undefined,
      srtCollector: undefined,
      certificate: new ServedCertificate(),
    };
    const missing = loadSrtAddon('/nonexistent/srt_ingest.node');
    assert.ok('reason' in missing);
    const config = defaultConfig();
    assert.equal(createSrtIngest(config, deps, () => missing).server, undefined);
    config.srt.enable = true;
    assert.throws(
      () => createSrtIngest(config, deps, () => missing),
      /^Error: srt\.enable: SRT is not available here: the SRT addon is not built \(libsrt was missing at npm install/,
    );
  });
});
