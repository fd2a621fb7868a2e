import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseOutputReference } from '../../src/process/config/address.js';
import { compileAccessRules, isInside } from '../../src/process/access/index.js';
import { processAccessProblems } from '../../src/process/service/encoder-access.js';
import { applyCleanup, compileRule, purgeFiles } from '../../src/process/service/cleanup.js';
import { buildCommand } from '../../src/process/config/command.js';
import { createCredentialMask, memfsSecrets } from '../../src/process/supervise/credential-mask.js';
import { configToStore, parseDb, serializeDb } from '../../src/process/store/db.js';
import {
  LineSplitter,
  PreludeParser,
  ProgressBlockParser,
  parseStatsLine,
  parseVstatsLine,
} from '../../src/process/ffmpeg/index.js';
import { parseVersionLine, serverOptions } from '../../src/process/supervise/ffmpeg-probe.js';
import { KeyedLocks } from '../../src/process/service/locks.js';
import { memfsPrefixes, OutputPrefixIndex } from '../../src/process/config/memfs-outputs.js';
import { replacePlaceholders, resolveConfig } from '../../src/process/config/placeholders.js';
import {
  CpuMeter,
  parseProcStatCpuTicks,
  parseProcStatusRssBytes,
} from '../../src/process/supervise/proc-usage.js';
import type { ProcessConfig } from '../../src/process/config/contract.js';
import { mergeOver, readProcessConfig } from '../../src/process/config/process-config.js';
import { ProgressTracker } from '../../src/process/progress/progress-tracker.js';
import { RateWindow } from '../../src/process/progress/rate-window.js';
import { ProcessReport } from '../../src/process/supervise/report.js';
import { shortUuid } from '../../src/process/config/short-id.js';
import { canTransition, STATES } from '../../src/process/supervise/states.js';
import { validateProcessConfig } from '../../src/process/config/validate-config.js';
import { MemoryFilesystem } from '../../src/storage/index.js';
import { FFMPEG_FIXTURES } from './support.js';

function config(body: Record<string, unknown>): ProcessConfig {
  const { config: read, problems } = readProcessConfig(body);
  assert.deepEqual(problems, []);
  return read as ProcessConfig;
}

const MINIMAL = { id: 'p', input: [{ id: 'in', address: 'a' }], output: [{ id: 'out', address: '-' }] };

describe('process config', () => {
  it('fills defaults and generates ids', () => {
    const read = config({ input: [{ address: 'x' }], output: [{ address: '-', id: '' }, { address: '-' }] });
    assert.match(read.id, /^[2-9A-HJ-NP-Za-km-z]{22}$/);
    assert.equal(read.autostart, true);
    assert.equal(read.type, 'ffmpeg');
    assert.notEqual(read.output[0]?.id, read.output[1]?.id);
    assert.deepEqual(read.limits, { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 });
  });

  it('names every field with a wrong type', () => {
    const { problems } = readProcessConfig({
      id: 5,
      input: 'x',
      output: [{ address: 1, options: 'y', cleanup: [{ pattern: 2, purge_on_delete: 'no' }] }],
      limits: [],
      autostart: 0,
    });
    assert.deepEqual(problems.sort(), [
      'autostart: must be a boolean',
      'id: must be a string',
      'input: must be an array of objects',
      'limits: must be an object',
      'output[0].address: must be a string',
      'output[0].cleanup[0].pattern: must be a string',
      'output[0].cleanup[0].purge_on_delete: must be a boolean',
      'output[0].options: must be an array of strings',
    ]);
  });

  it('merges objects recursively and replaces arrays', () => {
    assert.deepEqual(
      mergeOver({ a: 1, limits: { x: 1, y: 2 }, list: [1, 2] }, { limits: { y: 3 }, list: [9] }),
      {
        a: 1,
        limits: { x: 1, y: 3 },
        list: [9],
      },
    );
  });

  it('validates semantics after resolving placeholders', () => {
    const placeholders = { diskfs: '/srv/data', memfs: 'http://u:p@127.0.0.1:1/memfs' };
    const context = {
      access: (resolved: ProcessConfig, written: ProcessConfig) =>
        processAccessProblems(resolved, written, {
          diskRoots: ['/srv/data'],
          protectedDirs: ['/srv/db'],
          own: { port: 1, memfsPath: '/memfs', localAddresses: [] },
          rules: compileAccessRules({
            input: { allow: [], block: [], paths: [] },
            output: { allow: [], block: [], paths: [] },
            devices: [],
          }),
        }),
      lookup: (id: string) => (id === 'src' ? config({ ...MINIMAL, id: 'src' }) : undefined),
    };
    // As the service does: the config is resolved once and both forms are checked.
    const check = (candidate: ProcessConfig): string[] =>
      validateProcessConfig(candidate, resolveConfig(candidate, placeholders), context);
    assert.deepEqual(check(config({ ...MINIMAL, output: [{ address: '{diskfs}/ok/{processid}.ts' }] })), []);
    assert.deepEqual(check(config({ ...MINIMAL, output: [{ address: '{memfs}/a.m3u8' }] })), []);
    assert.deepEqual(check(config({ ...MINIMAL, input: [{ address: '#src:output=out' }] })), []);
    assert.match(
      check(config({ ...MINIMAL, id: '../..', output: [{ address: '{diskfs}/{processid}/x' }] })).join(),
      /output\[0\]\.address "\{diskfs\}\/\{processid\}\/x": ".*" writes \/x, outside the disk directory/,
    );
    // The server's own API is not an input; another process's output is checked as that output.
    assert.match(
      check(config({ ...MINIMAL, input: [{ address: 'http://127.0.0.1:1/api' }] })).join(),
      /input\[0\]\.address "http:\/\/127\.0\.0\.1:1\/api": .* reaches this server's own port 1/,
    );
    assert.match(
      check(config({ ...MINIMAL, input: [{ address: '#p:output=out' }] })).join(),
      /cannot read its own output/,
    );
    assert.match(check(config({ ...MINIMAL, id: 'a/b' })).join(), /must not contain/);
  });

  it('resolves placeholders in ids, addresses, options and cleanup patterns; unknown ones stay', () => {
    const resolved = resolveConfig(
      config({
        id: 'cam',
        reference: 'studio',
        options: ['-metadata', 'title={reference}', '{unknown}'],
        input: [{ id: '{processid}-in', address: '{fs:disk}/{inputid}.mp4', options: ['-i_{inputid}'] }],
        output: [
          {
            id: 'hls',
            address: '{memfs}/{processid}_{outputid}.m3u8',
            options: ['-hls_segment_filename', '{fs:mem}/{processid}_%d.ts'],
            cleanup: [{ pattern: 'memfs:/{processid}_{outputid}*' }],
          },
        ],
      }),
      { diskfs: '/data', memfs: 'http://a:b@h:1/memfs' },
    );
    assert.equal(resolved.input[0]?.id, 'cam-in');
    assert.equal(resolved.input[0]?.address, '/data/cam-in.mp4');
    assert.deepEqual(resolved.input[0]?.options, ['-i_cam-in']);
    assert.equal(resolved.output[0]?.address, 'http://a:b@h:1/memfs/cam_hls.m3u8');
    assert.deepEqual(resolved.output[0]?.options, [
      '-hls_segment_filename',
      'http://a:b@h:1/memfs/cam_%d.ts',
    ]);
    assert.equal(resolved.output[0]?.cleanup[0]?.pattern, 'memfs:/cam_hls*');
    assert.deepEqual(resolved.options, ['-metadata', 'title=studio', '{unknown}']);
    assert.equal(replacePlaceholders('{processid^:}', { processid: 'a:b\\c' }), 'a\\:b\\\\c');
  });

  it('builds the command line in the documented order', () => {
    const read = config({
      id: 'x',
      options: ['-loglevel', 'info'],
      input: [
        { id: 'a', address: 'in1', options: ['-re'] },
        { id: 'b', address: 'in2' },
      ],
      output: [
        { id: 'o', address: 'rel/out.ts', options: ['-f', 'mpegts'] },
        { id: 'p', address: 'rtmp://h/app' },
      ],
    });
    assert.deepEqual(buildCommand(read, ['-nostdin'], '/data'), [
      '-nostdin',
      '-loglevel',
      'info',
      '-re',
      '-i',
      'in1',
      '-i',
      'in2',
      '-f',
      'mpegts',
      '/data/rel/out.ts',
      'rtmp://h/app',
    ]);
  });

  it('reads output references and tells paths inside a directory', () => {
    assert.ok(isInside('/d/a', '/d') && isInside('/d', '/d/') && !isInside('/dd/a', '/d'));
    assert.deepEqual(parseOutputReference('#a:b:output=c'), { processId: 'a:b', outputId: 'c' });
    assert.equal(parseOutputReference('a.mp4'), undefined);
  });

  it('writes short UUIDs with the base-57 alphabet', () => {
    assert.equal(shortUuid('00000000-0000-0000-0000-000000000000'), '2'.repeat(22));
    assert.equal(shortUuid('ffffffff-ffff-ffff-ffff-ffffffffffff').length, 22);
    assert.notEqual(shortUuid(), shortUuid());
  });
});

describe('db.json format', () => {
  it('reads a datarhei Core v16 file and writes it back in the same form', () => {
    const data = JSON.parse(
      readFileSync(join(import.meta.dirname, 'fixtures', 'datarhei-v16-db.json'), 'utf8'),
    ) as unknown;
    const content = parseDb(data);
    assert.equal(content.processes.length, 2);
    const snapshot = content.processes[1];
    assert.equal(snapshot?.order, 'stop');
    const read = config(snapshot?.body ?? {});
    assert.deepEqual(read.limits, { cpu_usage: 12.5, memory_mbytes: 256, waitfor_seconds: 10 });
    const store = configToStore(read);
    const original = (data as { process: Record<string, { config: Record<string, unknown> }> }).process[
      read.id
    ]?.config;
    for (const key of [
      'limit_cpu_usage',
      'limit_memory_bytes',
      'limit_waitfor_seconds',
      'reconnect_delay_seconds',
      'options',
    ]) {
      assert.deepEqual(store[key as keyof typeof store], original?.[key], key);
    }
    const written = JSON.parse(
      serializeDb(
        [{ config: read, createdAt: 1, updatedAt: 2, order: 'start', metadata: { a: 1 } }],
        content.system,
      ),
    ) as Record<string, unknown>;
    assert.equal(written.version, 4);
    assert.deepEqual(parseDb(written).processes[0]?.metadata, { a: 1 });
    assert.throws(() => parseDb({ version: 5 }), /unsupported version 5/);
  });
});

describe('progress tracking on a recorded run', () => {
  it('assembles per-stream values from the prelude, progress, -vstats and server-side bytes', () => {
    const tracker = new ProgressTracker({
      inputs: [
        { id: 'video', address: 'testsrc' },
        { id: 'audio', address: 'sine' },
      ],
      outputs: [
        { id: 'ts', address: 'out.ts' },
        { id: 'null', address: '-' },
      ],
    });
    const prelude = new PreludeParser();
    const feed = (name: string, onLine: (line: string) => void): void => {
      const splitter = new LineSplitter({ maxLineLength: 8192, onLine });
      splitter.push(readFileSync(join(FFMPEG_FIXTURES, name)));
      splitter.end();
    };
    feed('av-two-outputs.stderr.txt', (line) => {
      const stats = parseStatsLine(line);
      if (stats !== undefined) tracker.onStatsLine(stats);
      else if (prelude.push(line)) tracker.setPrelude(prelude.result());
    });
    const blocks = new ProgressBlockParser();
    feed('av-two-outputs.progress.txt', (line) => {
      const block = blocks.push(line);
      if (block !== undefined) tracker.onProgressBlock(block);
    });
    let videoBytes = 0;
    feed('av-two-outputs.vstats.txt', (line) => {
      const vstats = parseVstatsLine(line);
      if (vstats === undefined) return;
      videoBytes += vstats.frameBytes;
      tracker.onVstats(vstats);
    });
    tracker.addOutputBytes(1, 5000);
    const values = tracker.values(Date.now());
    assert.equal(values.frame, 40);
    assert.equal(values.timeSeconds, 4);
    const [video, audio, copy] = values.outputs;
    assert.deepEqual(
      [video?.id, video?.frame, video?.packet, video?.sizeBytes, video?.q],
      ['ts', 40, 40, videoBytes, 25],
    );
    assert.deepEqual(
      [audio?.id, audio?.type, audio?.sizeBytes],
      ['ts', 'audio', Math.max(0, 27824 - videoBytes)],
    );
    assert.deepEqual([copy?.id, copy?.sizeBytes, copy?.q], ['null', 5000, -1]);
    assert.equal(values.sizeBytes, 27824 + 5000);
    const [videoIn, audioIn] = values.inputs;
    assert.deepEqual([videoIn?.id, videoIn?.frame, videoIn?.width], ['video', 40, 64]);
    assert.deepEqual([audioIn?.id, audioIn?.samplingHz], ['audio', 44100]);
  });

  it('gives the process the frame count of its first video output stream, even when -vstats is ahead', () => {
    const tracker = new ProgressTracker({
      inputs: [{ id: 'in', address: 'testsrc' }],
      outputs: [{ id: 'out', address: '-' }],
    });
    const prelude = new PreludeParser();
    const lines = (name: string): string[] =>
      readFileSync(join(FFMPEG_FIXTURES, name), 'utf8').split(/\r\n|\r|\n/);
    for (const line of lines('testsrc-null.stderr.txt')) {
      if (parseStatsLine(line) === undefined && prelude.push(line)) tracker.setPrelude(prelude.result());
    }
    // The first -progress block (frame=10) and then every -vstats line of the run (40 packets):
    // ffmpeg reports progress once per second, -vstats arrives in bursts in between.
    const blocks = new ProgressBlockParser();
    for (const line of lines('testsrc-null.progress.txt')) {
      const block = blocks.push(line);
      if (block !== undefined) {
        tracker.onProgressBlock(block);
        break;
      }
    }
    for (const line of lines('testsrc-null.vstats.txt')) {
      const vstats = parseVstatsLine(line);
      if (vstats !== undefined) tracker.onVstats(vstats);
    }
    const values = tracker.values(Date.now());
    assert.equal(values.outputs[0]?.frame, 40);
    assert.deepEqual([values.frame, values.packet], [40, 40], 'the same counters as the stream');
  });

  it('computes rates over a sliding window that decays when samples stop', () => {
    const window = new RateWindow(10_000);
    assert.equal(window.rate(0), 0);
    for (let second = 0; second <= 5; second++) window.push(second * 1000, second * 25);
    assert.equal(window.rate(5000), 25);
    assert.ok(window.rate(9000) < 25 && window.rate(9000) > 0, 'stalled: decays');
    assert.equal(window.rate(30_000), 0, 'everything left the window');
    window.push(31_000, 3);
    window.push(32_000, 1);
    assert.equal(window.rate(32_000), 0, 'a counter that went back starts over');
  });
});

describe('report, states, usage, locks, probe, memfs outputs', () => {
  it('bounds the log and the history, and keeps the prelude apart', () => {
    const report = new ProcessReport({ maxLines: 3, maxHistory: 2 }, 100, (line) => line);
    for (let run = 0; run < 4; run++) {
      report.startRun(100 + run);
      report.addLine(100 + run, `prelude ${run}`);
      report.endPrelude();
      for (let line = 0; line < 5; line++) report.addLine(100 + run, `line ${run}.${line}`);
      report.endRun(101 + run, 'finished');
    }
    assert.deepEqual(report.currentRun().prelude, ['prelude 3']);
    assert.deepEqual(
      report.currentRun().log.map(([, line]) => line),
      ['line 3.2', 'line 3.3', 'line 3.4'],
    );
    assert.deepEqual(
      report.earlierRuns().map((run) => run.createdAt),
      [101, 102],
    );
    assert.equal(report.lastLogLine, 'line 3.4');
    const successor = new ProcessReport({ maxLines: 3, maxHistory: 2 }, 200, (line) => line);
    successor.adopt(report);
    assert.deepEqual(
      successor.earlierRuns().map((run) => run.createdAt),
      [102, 103],
    );
  });

  it('masks the memfs password and its basic-auth form wherever they stand, in every report line', () => {
    const secrets = memfsSecrets({ enable: true, username: 'admin', password: "top'secret pw" });
    const basic = Buffer.from("admin:top'secret pw").toString('base64');
    assert.deepEqual(secrets, [
      "top'secret pw",
      "top'secret%20pw",
      basic,
      Buffer.from("admin:top'secret%20pw").toString('base64'),
    ]);
    assert.deepEqual(memfsSecrets({ enable: false, username: 'admin', password: 'x' }), []);
    const mask = createCredentialMask(secrets);
    // The quote stops the URL pattern; only the literal replacement catches this one.
    assert.equal(
      mask("Opening 'http://admin:top'secret%20pw@127.0.0.1:8080/memfs/a.ts' for writing"),
      "Opening 'http://***:***@127.0.0.1:8080/memfs/a.ts' for writing",
    );
    assert.equal(mask(`header ${basic} echoed`), 'header *** echoed');
    assert.equal(mask("title=top'secret pw"), 'title=***');
    assert.equal(mask('Authorization: Basic Zm9vOmJhcg=='), 'Authorization: Basic ***');
    assert.equal(
      createCredentialMask(['pw'])('pw stays: too short to replace alone'),
      'pw stays: too short to replace alone',
    );

    const report = new ProcessReport({ maxLines: 3, maxHistory: 1 }, 100, mask);
    report.addLine(100, `Authorization: Basic ${basic}`);
    report.addLine(100, "streamcore: note about top'secret pw");
    const shown = JSON.stringify([report.currentRun(), report.lastLogLine]);
    assert.ok(!shown.includes('secret') && !shown.includes(basic), shown);
    assert.equal(report.currentRun().prelude[0], 'Authorization: Basic ***');
  });

  it('allows exactly the transitions of the contract', () => {
    const allowed = STATES.flatMap((from) =>
      STATES.filter((to) => canTransition(from, to)).map((to) => `${from}>${to}`),
    );
    assert.deepEqual(allowed, [
      'finished>starting',
      'starting>running',
      'starting>finishing',
      'starting>failed',
      'running>finished',
      'running>finishing',
      'running>failed',
      'running>killed',
      'finishing>finished',
      'finishing>failed',
      'finishing>killed',
      'failed>starting',
      'killed>starting',
    ]);
  });

  it('reads CPU ticks and resident memory from /proc text', () => {
    const stat =
      '4242 (ffmpeg (x) y) S 1 4242 4242 0 -1 4194560 2419 0 0 0 150 50 0 0 20 0 3 0 12345 1000 500';
    assert.equal(parseProcStatCpuTicks(stat), 200);
    assert.equal(parseProcStatusRssBytes('Name:\tffmpeg\nVmRSS:\t   31244 kB\nThreads: 3\n'), 31244 * 1024);
    assert.equal(parseProcStatusRssBytes('Name:\tzombie\n'), undefined);
    const meter = new CpuMeter(2);
    assert.equal(meter.update(100, 0), undefined);
    assert.equal(meter.update(200, 1000), 50, '1 s of CPU in 1 s on 2 CPUs is 50 %');
  });

  it('runs operations on the same key one after the other', async () => {
    const locks = new KeyedLocks();
    const order: string[] = [];
    const slow = locks.run(['a'], async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      order.push('a1');
    });
    const other = locks.run(['b'], () => Promise.resolve(void order.push('b')));
    const second = locks.run(['b', 'a'], () => Promise.resolve(void order.push('a2')));
    await Promise.all([slow, other, second]);
    assert.deepEqual(order, ['b', 'a1', 'a2']);
  });

  it('asks an ffmpeg of 4.4 or newer for progress streams only', () => {
    assert.deepEqual(parseVersionLine('ffmpeg version 5.1.9-0+deb12u1 Copyright'), {
      version: '5.1.9-0+deb12u1',
      progressStreams: true,
    });
    assert.equal(parseVersionLine('ffmpeg version 4.3.1').progressStreams, false);
    assert.equal(parseVersionLine('ffmpeg version N-110000-gabc').progressStreams, true);
    assert.equal(parseVersionLine('not ffmpeg').version, '');
    assert.deepEqual(serverOptions({ version: '', progressStreams: false }), []);
    assert.ok(
      serverOptions({ version: '6.0', progressStreams: true }, '/tmp/v.fifo').includes('/tmp/v.fifo'),
    );
  });

  it('finds the output a memfs write belongs to', () => {
    const base = 'http://u:p@127.0.0.1:9/memfs';
    assert.deepEqual(
      memfsPrefixes(
        {
          id: 'o',
          address: `${base}/cam1.m3u8`,
          options: ['-hls_segment_filename', `${base}/seg/cam1_%04d.ts`],
          cleanup: [],
        },
        base,
      ),
      ['/cam1', '/seg/cam1_'],
    );
    assert.deepEqual(
      memfsPrefixes({ id: 'o', address: 'http://127.0.0.1:9/memfs/x.m3u8', options: [], cleanup: [] }, base),
      ['/x'],
    );
    assert.deepEqual(memfsPrefixes({ id: 'o', address: '/data/x.m3u8', options: [], cleanup: [] }, base), []);
    const index = new OutputPrefixIndex();
    index.replace([
      { processId: 'cam1', output: 0, prefix: '/cam1' },
      { processId: 'cam10', output: 0, prefix: '/cam10' },
    ]);
    assert.equal(index.find('/cam10_0001.ts')?.processId, 'cam10');
    assert.equal(index.find('/cam1_0001.ts')?.processId, 'cam1');
    assert.equal(index.find('/other.ts'), undefined);
  });

  it('names every memfs path an output writes, for its encoder credential', () => {
    const base = 'http://127.0.0.1:9/memfs';
    const prefixes = (address: string, options: string[]): string[] =>
      memfsPrefixes({ id: 'o', address, options, cleanup: [] }, base).sort();
    // Variant streams with the master playlist beside them.
    assert.deepEqual(
      prefixes(`${base}/live/cam_%v.m3u8`, [
        ...['-f', 'hls', '-master_pl_name', 'master.m3u8'],
        ...['-hls_segment_filename', `${base}/live/cam_%v_%03d.ts`],
      ]),
      ['/live/cam_', '/live/master'],
    );
    // fMP4 segments: the init segment's default name, or the one given.
    assert.deepEqual(prefixes(`${base}/f/x.m3u8`, ['-hls_segment_type', 'fmp4']), ['/f/init', '/f/x']);
    assert.deepEqual(
      prefixes(`${base}/f/x.m3u8`, ['-hls_segment_type', 'fmp4', '-hls_fmp4_init_filename', 'x_init.mp4']),
      ['/f/init', '/f/x', '/f/x_init'],
    );
    // DASH names its segments itself.
    assert.deepEqual(prefixes(`${base}/d/manifest.mpd`, []), [
      '/d/chunk-stream',
      '/d/init-stream',
      '/d/manifest',
      '/d/master',
      '/d/media_',
    ]);
    // A directory named by %v: up to it; a name that is all pattern at the root grants nothing.
    assert.deepEqual(prefixes(`${base}/v/%v/index.m3u8`, []), ['/v/']);
    assert.deepEqual(prefixes(`${base}/%v.m3u8`, []), []);
    // tee slaves, escaped as {memfs^:} gives them, with a segment name in their options.
    const escaped = base.replaceAll(':', '\\:');
    assert.deepEqual(
      prefixes(`[f=hls:hls_segment_filename=${escaped}/t/seg_%d.ts]${escaped}/t/list.m3u8|[f=null]-`, [
        '-f',
        'tee',
      ]),
      ['/t/list', '/t/seg_'],
    );
  });
});

describe('cleanup rules on the memory filesystem', () => {
  it('keeps the newest max_files, deletes old files, and purges', async () => {
    let now = 1_000_000;
    const mem = new MemoryFilesystem({
      maxSizeBytes: 0,
      purge: false,
      now: () => now,
      onListenerError: () => undefined,
    });
    for (let i = 0; i < 6; i++) {
      now += 1000;
      await mem.write(`/cam_${i}.ts`, Buffer.from('x'));
    }
    await mem.write('/cam.m3u8', Buffer.from('playlist'));
    const filesystems = { mem, disk: mem };
    const keep = compileRule({
      pattern: 'memfs:/cam_*.ts',
      max_files: 4,
      max_file_age_seconds: 0,
      purge_on_delete: true,
    });
    assert.ok(keep !== undefined);
    assert.equal(await applyCleanup([keep], filesystems, now), 2);
    assert.deepEqual((await mem.list()).map((file) => file.name).sort(), [
      '/cam.m3u8',
      '/cam_2.ts',
      '/cam_3.ts',
      '/cam_4.ts',
      '/cam_5.ts',
    ]);
    const age = compileRule({
      pattern: 'mem:cam_*.ts',
      max_files: 0,
      max_file_age_seconds: 2,
      purge_on_delete: false,
    });
    assert.ok(age !== undefined);
    // cam_2 is 3 s old, cam_3 exactly 2 s: only files older than the bound go.
    assert.equal(await applyCleanup([age], filesystems, now), 1);
    assert.equal(await purgeFiles([age], filesystems), 0, 'a rule without purge_on_delete purges nothing');
    assert.equal(await purgeFiles([keep], filesystems), 3);
    assert.deepEqual(
      (await mem.list()).map((file) => file.name),
      ['/cam.m3u8'],
    );
    assert.equal(
      compileRule({ pattern: '/x', max_files: 1, max_file_age_seconds: 0, purge_on_delete: false }),
      undefined,
    );
  });
});
