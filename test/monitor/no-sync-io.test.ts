import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The event loop does no file I/O once the server runs (docs/architecture.md, Rules): in
 * src/monitor, a synchronous call (`…Sync(`) may only appear in a function that runs at start-up,
 * before the server listens. Each allowed function is listed with why it is start-up only; a new
 * synchronous call anywhere else fails this test. The enclosing function of a call is the nearest
 * function or method declaration above it (the code's formatting puts each on a line of its own).
 */
const MONITOR = join(import.meta.dirname, '..', '..', 'src', 'monitor');

const START_UP_ONLY: Record<string, string> = {
  'history/tier.ts load': 'Tier.load: listing and tidying the directory, before the server listens',
  'history/tier.ts sealOnLoad': 'called by Tier.load only: windows an earlier run left unsealed',
  'history/tier.ts setAside': 'called by Tier.load only: moves an unreadable entry out of the way',
  'history/sealed-files.ts load': "called by Tier.load only: checks a sealed file's index and size",
  'history/open-window.ts load': 'called by Tier.load only: replays the open window of the last run',
  'history/open-window.ts sealSync': 'called by Tier.sealOnLoad only',
  'history/window-log.ts readWindowLog': 'called by OpenWindow.load only',
  'history/segment-file.ts writeSegmentSync': 'called by OpenWindow.sealSync only',
  'history/segment-file.ts readSegmentIndex': 'called by SealedFiles.load only',
  'history/segment-file.ts readExactlySync': 'called by readSegmentIndex only',
  'history/atomic-file.ts writeFileAtomicSync': 'called by OpenWindow.load and writeSegmentSync only',
};

const SYNC_CALL = /(?<!function )\b\w*Sync\(/;
/** A function, or a method of a class (two spaces in, opening its body or its parameter list). */
const DECLARATION =
  /^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)|^ {2}(?:(?:private|public|protected|static|async|override|get)\s+)*(?!(?:if|for|while|switch|return|await)\b)(\w+)\s*[(<].*[{(]$/;

/** `file function` for every synchronous call in the .ts files under `dir`. */
function syncCallSites(dir: string): { site: string; line: string }[] {
  const sites: { site: string; line: string }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const file = relative(dir, path);
    let current = '(top level)';
    for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
      const declared = DECLARATION.exec(line);
      if (declared !== null) current = declared[1] ?? declared[2]!;
      if (SYNC_CALL.test(line) && !line.trimStart().startsWith('*') && !line.trimStart().startsWith('//'))
        sites.push({ site: `${file} ${current}`, line: `${file}:${i + 1}: ${line.trim()}` });
    }
  }
  return sites;
}

describe('monitor: no synchronous file I/O after start-up', () => {
  it('calls a synchronous function only from the start-up functions listed, each with its reason', () => {
    const outside = syncCallSites(MONITOR)
      .filter(({ site }) => START_UP_ONLY[site] === undefined)
      .map(({ line }) => line);
    assert.deepEqual(outside, []);
  });

  it('lists no start-up function that has no synchronous call any more', () => {
    const used = new Set(syncCallSites(MONITOR).map(({ site }) => site));
    assert.deepEqual(
      Object.keys(START_UP_ONLY).filter((site) => !used.has(site)),
      [],
    );
  });
});
