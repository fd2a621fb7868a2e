import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  formatNameOf,
  matchesNameList,
  readBooleanOption,
} from '../../../src/process/access/option-value.js';

/**
 * Spellings of a boolean, with what ffmpeg 5.1 (libavutil/opt.c `set_string_bool`) sets a [0, 1]
 * option to: 0, 1, or undefined where it refuses the value.
 */
const SPELLINGS: [string, number | undefined][] = [
  ['0', 0],
  ['1', 1],
  ['false', 0],
  ['no', 0],
  ['n', 0],
  ['off', 0],
  ['disable', 0],
  ['disabled', 0],
  ['OFF', 0],
  ['No', 0],
  ['FaLsE', 0],
  ['00', 0],
  ['-0', 0],
  ['+0', 0],
  [' 0', 0],
  [' +0', 0],
  ['\t0', 0],
  ['\n0', 0],
  ['', 0],
  // av_match_name compares past the entry's comma.
  ['no,', 0],
  ['n,no', 0],
  ['false,', 0],
  ['y,', 1],
  ['enabled,', 1],
  // strtol's long, cut to an int: 2^32 is 0, below -2^63 clamps to -2^63, which is 0 too.
  ['4294967296', 0],
  ['-4294967296', 0],
  ['-99999999999999999999', 0],
  ['4294967297', 1],
  ['-4294967295', 1],
  ['99999999999999999999', undefined],
  ['true', 1],
  ['yes', 1],
  ['y', 1],
  ['on', 1],
  ['enable', 1],
  ['TRUE', 1],
  ['0.0', undefined],
  ['0x0', undefined],
  ['0k', undefined],
  ['0 ', undefined],
  [' ', undefined],
  ['auto', undefined],
  ['-1', undefined],
  ['2', undefined],
  ['f', undefined],
  ['yes,no', undefined],
];

describe('option values read like ffmpeg: booleans', () => {
  for (const [text, value] of SPELLINGS) {
    it(`${JSON.stringify(text)} is ${String(value)}`, () => {
      assert.equal(readBooleanOption(text), value);
    });
  }

  it('keeps -1 (auto) where the range allows it', () => {
    assert.equal(readBooleanOption('auto', { min: -1, max: 1 }), -1);
    assert.equal(readBooleanOption('-1', { min: -1, max: 1 }), -1);
    assert.equal(readBooleanOption('AUTO', { min: -1, max: 1 }), undefined, 'auto is compared exactly');
  });

  it('matches names the way av_match_name does', () => {
    assert.equal(matchesNameList('MP4', 'mov,mp4,m4a'), true);
    assert.equal(matchesNameList('mov,mp4', 'mov,mp4,m4a'), true);
    assert.equal(matchesNameList('mp', 'mov,mp4,m4a'), false);
    assert.equal(matchesNameList('mp4,', 'mov,mp4'), false);
    assert.equal(matchesNameList('x', '-y'), true, 'a negated entry matches every other name');
  });
});

/**
 * The same spellings given to the real ffmpeg as the concat demuxer's `-safe`, with a list that
 * names an absolute path: safe mode on refuses it ("Unsafe file name"), off reads it, and a value
 * ffmpeg cannot read as a boolean stops it before.
 */
describe('option values read like ffmpeg: the real ffmpeg agrees', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-option-value-'));
    const media = join(dir, 'media.wav');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'anullsrc=d=0.1', '-y', media]);
    assert.equal(made.status, 0, String(made.stderr));
    await writeFile(join(dir, 'list.txt'), `file '${media}'\n`);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  function safeModeOf(text: string): number | undefined {
    const run = spawnSync(
      'ffmpeg',
      [
        '-nostdin',
        '-v',
        'error',
        '-f',
        'concat',
        '-safe',
        text,
        '-i',
        join(dir, 'list.txt'),
        '-f',
        'null',
        '-',
      ],
      { encoding: 'utf8' },
    );
    if (/Unable to parse option value/.test(run.stderr)) return undefined;
    if (/Unsafe file name/.test(run.stderr)) return 1;
    assert.equal(run.status, 0, run.stderr);
    return 0;
  }

  it('reads every spelling as ffmpeg does', () => {
    const differing = SPELLINGS.filter(([text]) => safeModeOf(text) !== readBooleanOption(text));
    assert.deepEqual(
      differing.map(([text]) => text),
      [],
    );
  });
});

/** `-f` spellings of formats whose names are lists, with the name the policy reads from each. */
const FORMAT_SPELLINGS: [string, string][] = [
  ['v4l2', 'v4l2'],
  ['V4L2', 'v4l2'],
  ['video4linux2,v4l2', 'video4linux2'],
  ['Video4Linux2,V4L2', 'video4linux2'],
  ['video4linux2,v4', 'video4linux2'],
  ['mov,mp4', 'mov'],
];

describe('option values read like ffmpeg: format names', () => {
  for (const [text, name] of FORMAT_SPELLINGS) {
    it(`-f ${text} is ${name}`, () => assert.equal(formatNameOf(text), name));
  }

  it('names the format the real ffmpeg opens for each spelling', () => {
    // ffmpeg logs with the opened format's full name list: `[video4linux2,v4l2 @ 0x…]`.
    for (const [text, name] of FORMAT_SPELLINGS) {
      const run = spawnSync(
        'ffmpeg',
        ['-hide_banner', '-f', text, '-i', '/dev/null', '-t', '0', '-f', 'null', '-'],
        {
          encoding: 'utf8',
        },
      );
      const opened = /^\[([a-z0-9_,]+) @ /m.exec(run.stderr)?.[1];
      assert.ok(opened !== undefined, `${text}: ${run.stderr}`);
      assert.ok(opened.split(',').includes(name), `${text} opened ${opened}, not ${name}`);
    }
  });
});
