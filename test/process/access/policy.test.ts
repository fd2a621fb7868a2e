import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accessSettingProblems } from '../../../src/config/index.js';
import {
  checkEncoderAccess,
  compileAccessRules,
  type AccessContext,
  type AccessSettings,
  type EncoderCommand,
} from '../../../src/process/access/index.js';

const DISK = '/srv/data';
const MEMFS = 'http://admin:s3cret@127.0.0.1:8080/memfs';

function settings(overrides: Partial<AccessSettings> = {}): AccessSettings {
  return {
    input: { allow: [], block: [], paths: [] },
    output: { allow: [], block: [], paths: [] },
    devices: [],
    ...overrides,
  };
}

function context(overrides: Partial<AccessSettings> = {}): AccessContext {
  return {
    diskRoots: [DISK, '/real/data'],
    protectedDirs: ['/srv/config', `${DISK}/db`],
    own: { port: 8080, memfsPath: '/memfs', localAddresses: ['192.0.2.2', 'fd00::2'] },
    rules: compileAccessRules(settings(overrides)),
  };
}

function command(parts: Partial<EncoderCommand>): EncoderCommand {
  return {
    options: parts.options ?? [],
    input: parts.input ?? [{ address: `${DISK}/in.ts`, options: [] }],
    output: parts.output ?? [{ address: `${DISK}/out.ts`, options: [] }],
  };
}

function problemsOf(parts: Partial<EncoderCommand>, ctx = context()): string[] {
  const config = command(parts);
  return checkEncoderAccess(config, config, ctx);
}

const output = (address: string, options: string[] = []): Partial<EncoderCommand> => ({
  output: [{ address, options }],
});
const input = (address: string, options: string[] = []): Partial<EncoderCommand> => ({
  input: [{ address, options }],
});

describe('encoder access policy: refused', () => {
  const refusedOutputs: [string, string[], RegExp][] = [
    ['tee:/outside/w.bin|/srv/data/ok.bin', [], /\/outside\/w\.bin/],
    ['crypto:/outside/x.ts', [], /\/outside\/x\.ts/],
    ['crypto+file:///outside/x.ts', [], /\/outside\/x\.ts/],
    ['md5:/outside/sum', [], /\/outside\/sum/],
    ['cache:/outside/x', [], /outside/],
    ['async:file:/outside/x', [], /outside/],
    ['file:/outside/x.ts', [], /outside the disk directory/],
    ['file:///etc/escape.ts', [], /\/etc\/escape\.ts/],
    ['/outside/x.ts', [], /outside the disk directory/],
    ['../escape.ts', [], /\/srv\/escape\.ts/],
    ['/srv/data/../escape.ts', [], /\/srv\/escape\.ts/],
    ['/srv/data/db/db.json', [], /database directory/],
    ['[f=mpegts]/outside/a.ts|/srv/data/b.ts', [], /\/outside\/a\.ts/],
    ['[f=hls:hls_segment_filename=/outside/%d.ts]/srv/data/a.m3u8', ['-f', 'tee'], /hls_segment_filename/],
    ['tee:[f=mpegts]/srv/data/a.ts|crypto:/outside/b.ts', [], /\/outside\/b\.ts/],
    ['tee:tee:tee:tee:tee:tee:tee:tee:tee:tee:/srv/data/a', [], /more than 8 deep/],
    ['pipe:2', [], /pipe:1 only/],
    ['pipe:3', [], /pipe:1 only/],
    ['fd:3', [], /descriptors/],
    ['unix:/run/docker.sock', [], /local sockets/],
    ['data:text/plain,x', [], /cannot be written/],
    ['sftp://host/x', [], /not allowed/],
    ['http://127.0.0.1:8080/api/v3/process', [], /own port 8080/],
    ['http://admin:s3cret@127.0.0.1:8080/memfs/../api/v3/config', [], /own port/],
    ['/dev/fb0', ['-f', 'fbdev'], /ffmpeg\.access\.devices/],
    ['/dev/null', [], /outside the disk directory/],
  ];
  for (const [address, options, expected] of refusedOutputs) {
    it(`output ${address} ${options.join(' ')}`, () => {
      const problems = problemsOf(output(address, options));
      assert.ok(problems.length > 0, 'refused');
      assert.ok(
        problems.some((line) => line.startsWith(`output[0].`)),
        problems.join('\n'),
      );
      assert.match(problems.join('\n'), expected);
    });
  }

  const refusedInputs: [string, string[], RegExp][] = [
    ['file:/etc/shadow', [], /\/etc\/shadow/],
    ['/etc/shadow', [], /\/etc\/shadow/],
    ['/srv/data/../config/config.json', [], /\/srv\/config\/config\.json/],
    ['subfile,,start,0,end,0,,:/etc/shadow', [], /\/etc\/shadow/],
    ['concat:/srv/data/a.ts|/etc/shadow', [], /\/etc\/shadow/],
    ['concatf:/srv/data/list.txt', [], /concatf/],
    ['cache:/etc/shadow', [], /\/etc\/shadow/],
    ['async:/etc/shadow', [], /\/etc\/shadow/],
    ['crypto:/etc/shadow', [], /\/etc\/shadow/],
    ['hls+file:///etc/x.m3u8', [], /\/etc\/x\.m3u8/],
    ['tee:/srv/data/a', [], /only writes/],
    ['md5:/srv/data/a', [], /only writes/],
    ['http://127.0.0.1:8080/api/v3/config', [], /own port 8080/],
    ['http://2130706433:8080/api', [], /own port/],
    ['http://0x7f.1:8080/api', [], /own port/],
    ['http://localhost:8080/api', [], /own port/],
    ['http://[::1]:8080/api', [], /own port/],
    ['http://[::ffff:127.0.0.1]:8080/api', [], /own port/],
    ['http://192.0.2.2:8080/api', [], /own port/],
    ['http://127.0.0.1:8080/memfs%2f..%2fapi', [], /own port/],
    ['http://127.0.0.1:8080/memfsx/a.m3u8', [], /own port/],
    ['http://169.254.169.254/latest/meta-data/', [], /link-local/],
    ['http://[fe80::1]/x', [], /link-local/],
    ['/srv/data/{..,x}/etc/shadow', ['-pattern_type', 'glob'], /glob/],
    ['/srv/data/\\.\\./x', [], /glob/],
    ['pipe:3', [], /pipe:0 only/],
    ['fd:0', [], /descriptors/],
    ['unix:/run/docker.sock', [], /local sockets/],
    ['/dev/video0', ['-f', 'v4l2'], /ffmpeg\.access\.devices/],
    ['movie=/etc/shadow', ['-f', 'lavfi'], /\/etc\/shadow/],
    ['testsrc,frei0r=distort0r', ['-f', 'lavfi'], /frei0r/],
  ];
  for (const [address, options, expected] of refusedInputs) {
    it(`input ${address} ${options.join(' ')}`, () => {
      const problems = problemsOf(input(address, options));
      assert.ok(
        problems.some((line) => line.startsWith('input[0].')),
        problems.join('\n'),
      );
      assert.match(problems.join('\n'), expected);
    });
  }

  const refusedOptions: [string[], RegExp][] = [
    [['-vstats_file', '/tmp/x'], /-vstats_file.*set by the server/],
    [['-progress', 'http://example.com/p'], /-progress.*set by the server/],
    [['-stats_period', '5'], /set by the server/],
    [['-vstats'], /set by the server/],
    [['/outside/x.mkv'], /"\/outside\/x\.mkv" is neither an option/],
    [['-y', '/outside/x.mkv'], /neither an option/],
    [['-c', 'copy', 'x.mkv'], /"x\.mkv" is neither an option/],
    [['--', 'x.mkv'], /"--"/],
    [['-hls_segment_filename', '/outside/%d.ts'], /-hls_segment_filename.*\/outside\/%d\.ts/],
    [['-hls_segment_filename', '/srv/data/../x_%d.ts'], /\/srv\/x_%d\.ts/],
    [['-passlogfile', '/tmp/pass'], /-passlogfile/],
    [['-sdp_file', '/tmp/s.sdp'], /-sdp_file/],
    [['-i', '/etc/shadow'], /-i.*\/etc\/shadow/],
    [['-f', 'lavfi', '-i', 'movie=/etc/shadow'], /-i.*\/etc\/shadow/],
    [['-attach', '/etc/shadow'], /-attach/],
    [['-dump_attachment:t', '/tmp/a'], /-dump_attachment/],
    [['-filter_script', '/srv/data/f.txt'], /cannot check/],
    [['-filter_complex_script', '/srv/data/f.txt'], /cannot check/],
    [['-/filter_complex', '/srv/data/f.txt'], /from a file/],
    [['-filter_complex', 'movie=/etc/shadow[m];[0:v][m]overlay'], /\/etc\/shadow/],
    [['-vf', 'drawtext=textfile=/etc/shadow'], /\/etc\/shadow/],
    [['-vf', "drawtext=textfile='/e\\tc/sha'dow"], /\/etc\/shadow/],
    [['-vf', 'subtitles=../config/config.json'], /config\.json/],
    [['-vf', 'psnr=stats_file=/tmp/psnr.log'], /\/tmp\/psnr\.log/],
    [['-vf', "'fre'i0r=distort0r"], /frei0r/],
    [['-af', 'ladspa=file=/usr/lib/x.so'], /ladspa/],
    [['-vf', "sendcmd=c='0 drawtext reinit textfile=x'"], /sendcmd/],
    [['-vf', 'zmq'], /zmq/],
    [['-vf', 'movie=pipe\\:3'], /pipe protocol/],
    [['-vf', 'movie=http\\://127.0.0.1\\:8080/api/v3/config'], /own port/],
    [['-master_pl_name', '../master.m3u8'], /plain file name/],
    [['-hls_fmp4_init_filename', '/tmp/init.mp4'], /plain file name/],
    [['-segment_list', '/tmp/list.m3u8'], /\/tmp\/list\.m3u8/],
    [['-x264-params', 'stats=/tmp/x264.log'], /\/tmp\/x264\.log/],
    [['-segment_format_options', 'hls_segment_filename=/tmp/x'], /hls_segment_filename/],
    [['-hls_key_info_file', '/etc/keyinfo'], /\/etc\/keyinfo/],
    [['-safe', '0'], /-safe 0/],
    [['-somefutureopt', '/etc/passwd'], /\/etc\/passwd/],
    [['-somefutureopt', 'file:x'], /file protocol/],
    [['-http_proxy', 'http://127.0.0.1:8080/'], /own port/],
  ];
  for (const [options, expected] of refusedOptions) {
    it(`options ${options.join(' ')}`, () => {
      for (const where of ['global', 'output'] as const) {
        const problems =
          where === 'global' ? problemsOf({ options }) : problemsOf(output(`${DISK}/o.ts`, options));
        assert.match(problems.join('\n'), expected, where);
        assert.ok(
          problems.every((line) => /^(options|output\[0\]\.options)\[\d+\]/.test(line)),
          problems.join('\n'),
        );
      }
    });
  }

  it('never repeats the memfs credentials in a refusal', () => {
    const problems = problemsOf(output(`${MEMFS}/../api/v3/config`));
    assert.ok(problems.length > 0);
    assert.doesNotMatch(problems.join('\n'), /s3cret/);
  });

  it('applies the user block and allow expressions at every level', () => {
    const blocking = context({ output: { allow: [], block: ['^rtmp://evil\\.'], paths: [] } });
    assert.match(
      problemsOf(output('rtmp://evil.example/app'), blocking).join(),
      /ffmpeg\.access\.output\.block/,
    );
    assert.match(
      problemsOf(output('[f=flv]rtmp://evil.example/app|/srv/data/a.ts'), blocking).join(),
      /block/,
    );
    assert.deepEqual(problemsOf(output('rtmp://good.example/app'), blocking), []);
    const allowing = context({ input: { allow: ['^http://cdn\\.'], block: [], paths: [] } });
    assert.match(problemsOf(input('rtmp://x.example/app'), allowing).join(), /ffmpeg\.access\.input\.allow/);
    assert.deepEqual(problemsOf(input('http://cdn.example/a.m3u8'), allowing), []);
    // Local files are matched as `file:<absolute path>` too, as in the reference.
    const files = context({ output: { allow: [], block: ['^file:/srv/data/private/'], paths: [] } });
    assert.match(problemsOf(output('private/x.ts'), files).join(), /block/);
  });
});

describe('encoder access policy: the host ffmpeg connects to (issue 24 item 3)', () => {
  // Each of these reaches 127.0.0.1:8080 or [::1]:8080 when ffmpeg opens it (av_url_split).
  const ownPortSpellings = [
    'http://evil.example\\@127.0.0.1:8080/metrics',
    'https://evil.example\\@127.0.0.1:8080/metrics',
    'rtmp://a\\@127.0.0.1:8080/live/x',
    'rtmps://a\\@127.0.0.1:8080/live/x',
    'rtmpt://a\\@127.0.0.1:8080/live/x',
    'rtsp://a\\@127.0.0.1:8080/x',
    'tcp://evil.example\\@127.0.0.1:8080',
    'tls://evil.example\\@127.0.0.1:8080',
    'srt://evil.example\\@127.0.0.1:8080',
    'http://evil.example\\@[::1]:8080/metrics',
    'tcp://evil.example\\@[::1]:8080',
    'http://a@b@127.0.0.1:8080/metrics',
    'http://[127.0.0.1]:8080/metrics',
    'http://[localhost]:8080/metrics',
    'http:127.0.0.1:8080/metrics',
    'http:/127.0.0.1:8080/metrics',
    'http://127.0.0.1:4294975376/metrics',
    'http://127.0.0.1:+8080/metrics',
    'http://127.0.0.1:8080x/metrics',
    'http://[::1%lo]:8080/metrics',
    'http://[0:0:0:0:0:ffff:7f00:1]:8080/metrics',
    'http://[::127.0.0.1]:8080/metrics',
    'http://0177.0.0.1:8080/metrics',
    'http://0:8080/metrics',
    'http://LOCALHOST.:8080/metrics',
    'http://ip6-localhost:8080/metrics',
  ];
  for (const address of ownPortSpellings) {
    it(`refuses ${address} as an input, an output and inside values`, () => {
      assert.match(problemsOf(input(address)).join('\n'), /own port 8080/);
      assert.match(problemsOf(output(address)).join('\n'), /own port 8080/);
      assert.match(problemsOf({ options: ['-rtmp_swfverify', address] }).join('\n'), /own port 8080/);
      const escaped = address.replace(/[\\:,[\]]/g, (char) => `\\${char}`);
      assert.match(
        problemsOf({ options: ['-vf', `movie=${escaped},scale=32:24`] }).join('\n'),
        /own port 8080/,
      );
    });
  }
  it('refuses backslashes and encoded separators in a memfs path', () => {
    assert.match(problemsOf(input('http://127.0.0.1:8080/memfs/a\\..\\..\\metrics')).join(), /own port/);
    assert.match(problemsOf(input('http://127.0.0.1:8080/memfs/a%2f..%2fx')).join(), /own port/);
  });
  it('refuses a link-local host behind a backslash', () => {
    assert.match(problemsOf(input('http://x\\@169.254.169.254/latest')).join(), /link-local/);
  });
  it('lets other hosts and ports through, whatever the user part says', () => {
    assert.deepEqual(problemsOf(input('http://127.0.0.1\\@evil.example:8080/x')), []);
    assert.deepEqual(problemsOf(input('http://127.0.0.1:8080@evil.example/x')), []);
    assert.deepEqual(problemsOf(input('tcp://evil.example\\@127.0.0.1:8081')), []);
    assert.deepEqual(problemsOf(input(`${MEMFS}/a.m3u8`)), []);
  });
});

describe('encoder access policy: names ffmpeg substitutes (issue 24 item 2)', () => {
  const hls = (map: string, address = `${DISK}/%v.m3u8`, extra: string[] = []): Partial<EncoderCommand> =>
    output(address, ['-f', 'hls', '-var_stream_map', map, ...extra]);
  const refused: [string, Partial<EncoderCommand>][] = [
    ['a name with ..', hls('v:0,name:../../outside/x')],
    ['the config file', hls('v:0,name:../config/config.json', `${DISK}/%V`)],
    ['a name with a directory', hls('v:0,name:a/b')],
    ['a backslash', hls('v:0,name:a\\b')],
    ['a dot that completes ..', hls('v:0,name:.', `${DISK}/%v./x.m3u8`)],
    ['an empty name', hls('v:0,name:', `${DISK}/.%v./x.m3u8`)],
    ['the second variant', hls('v:0,name:low v:1,name:..')],
    ['after other keys', hls('v:0,agroup:a,name:x/../../y')],
    [
      'a tee slave',
      output('[f=hls:var_stream_map=v\\:0\\,name\\:../../x]/srv/data/%v.m3u8', ['-f', 'tee', '-map', '0:v']),
    ],
    ['a global option', { options: ['-var_stream_map', 'v:0,name:../x'] }],
  ];
  for (const [what, parts] of refused) {
    it(`refuses ${what}`, () => assert.match(problemsOf(parts).join('\n'), /var_stream_map name/));
  }
  it('accepts plain names, indexes, %d and strftime patterns', () => {
    assert.deepEqual(problemsOf(hls('v:0,name:low v:1,name:high.hd')), []);
    assert.deepEqual(
      problemsOf(hls('v:0 v:1', `${DISK}/%v/index.m3u8`, ['-hls_segment_filename', `${DISK}/%v/%03d.ts`])),
      [],
    );
    assert.deepEqual(
      problemsOf(
        output(`${DISK}/x.m3u8`, [
          '-f',
          'hls',
          '-strftime',
          '1',
          '-hls_segment_filename',
          `${DISK}/%D-%s.ts`,
        ]),
      ),
      [],
    );
  });
});

describe('encoder access policy: allowed', () => {
  const allowed: [string, Partial<EncoderCommand>][] = [
    [
      'disk outputs',
      {
        output: [
          { address: `${DISK}/a/b.m3u8`, options: [] },
          { address: 'rel/out.ts', options: [] },
        ],
      },
    ],
    ['the real disk path', output('/real/data/x.ts')],
    [
      'memfs with credentials',
      {
        input: [{ address: `${MEMFS}/a.m3u8`, options: [] }],
        output: [{ address: `${MEMFS}/b.m3u8`, options: ['-f', 'hls', '-method', 'PUT'] }],
      },
    ],
    ['network outputs', output('rtmp://example.com/live/key')],
    [
      'tee to disk and network',
      output('[f=mpegts]a.ts|[f=flv:onfail=ignore]rtmp://x.example/y', ['-f', 'tee', '-map', '0']),
    ],
    ['stdout', output('-', ['-f', 'null'])],
    [
      'pipe:1 and md5 to stdout',
      {
        output: [
          { address: 'pipe:1', options: [] },
          { address: 'md5:', options: [] },
        ],
      },
    ],
    ['lavfi sources', input('testsrc2=size=160x120:rate=10,format=yuv420p', ['-f', 'lavfi', '-re'])],
    ['an srt listener', input('srt://:9000?mode=listener')],
    ['another local port', input('rtmp://127.0.0.1:1935/live/x')],
    ['inline data', input('data:text/plain;base64,AAAA')],
    ['a v4l2 device when listed', input('/dev/video0', ['-f', 'v4l2'])],
    [
      'common encoder options',
      {
        options: ['-loglevel', 'level+info', '-err_detect', 'ignore_err', '-y', '-nostats'],
        output: [
          {
            address: `${DISK}/{processid}.m3u8`.replace('{processid}', 'p'),
            options: [
              '-c:v',
              'libx264',
              '-preset:v',
              'ultrafast',
              '-b:v',
              '1M',
              '-g',
              '50',
              '-vf',
              'scale=320:-2,fps=1/2',
              '-filter_complex',
              '[0:v]split=2[a][b]',
              '-user_agent',
              'Mozilla/5.0 (X11; Linux x86_64)',
              '-metadata',
              'title=AC/DC',
              '-headers',
              'Referer: http://example.com/a\r\n',
              '-f',
              'hls',
              '-hls_time',
              '2',
              '-hls_list_size',
              '6',
              '-hls_flags',
              'append_list+delete_segments',
              '-hls_segment_filename',
              `${DISK}/p_%03d.ts`,
              '-master_pl_name',
              'master.m3u8',
              '-x264-params',
              'keyint=50:scenecut=0',
              '-vf',
              'drawtext=text=a/b:fontsize=20',
            ],
          },
        ],
      },
    ],
  ];
  const devices = context({ devices: ['v4l2'] });
  for (const [name, parts] of allowed) {
    it(name, () => assert.deepEqual(problemsOf(parts, devices), []));
  }

  it('lets ffmpeg.access.<direction>.paths open places outside the disk directory', () => {
    const ctx = context({ input: { allow: [], block: [], paths: ['/srv/media'] } });
    assert.deepEqual(problemsOf(input('/srv/media/film.mp4'), ctx), []);
    assert.match(problemsOf(output('/srv/media/film.mp4'), ctx).join(), /outside the disk directory/);
  });
});

describe('access settings', () => {
  it('names the key of an expression that does not compile and of a relative path', () => {
    const problems = accessSettingProblems(
      settings({
        input: { allow: ['('], block: [], paths: ['media'] },
        output: { allow: [], block: [], paths: ['/'] },
      }),
    );
    assert.equal(problems.length, 3);
    assert.match(problems[0] as string, /^ffmpeg\.access\.input\.allow: "\(" is not a valid expression/);
    assert.match(problems[1] as string, /^ffmpeg\.access\.input\.paths: "media" must be an absolute path/);
    assert.match(problems[2] as string, /^ffmpeg\.access\.output\.paths: "\/"/);
  });
});
