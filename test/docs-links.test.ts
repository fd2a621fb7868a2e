import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The repository explains itself: every `docs/<file>.md#<anchor>` the code cites, and every
 * relative link of the README and the docs, names a file and a heading that exist. A clone has no
 * other contract to follow, so a reference into a document outside the repository is a failure too.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CODE_DIRS = ['src', 'test', 'bench', 'scripts', 'web'];

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function filesBelow(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesBelow(path, keep));
    else if (keep(entry.name)) found.push(path);
  }
  return found;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (anchors === undefined) {
    anchors = headingAnchors(readFileSync(path, 'utf8'));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** What is wrong with a reference to `target` (a path, maybe with `#anchor`), or undefined. */
function problemOf(target: string, base: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = file === '' ? base : resolve(dirname(base), file);
  if (!existsSync(path)) return `${target}: no such file`;
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor)) {
    return `${target}: no heading with anchor #${anchor} in ${relative(ROOT, path)}`;
  }
  return undefined;
}

describe('references into the docs', () => {
  it('computes anchors as GitHub does', () => {
    const anchors = headingAnchors(
      '# Query API (`GET` and `POST /api/v3/metrics`)\n## Notes\n## Notes\n```\n# not a heading\n```\n',
    );
    assert.deepEqual([...anchors], ['query-api-get-and-post-apiv3metrics', 'notes', 'notes-1']);
  });

  it('every docs/<file>.md#<anchor> cited in the code exists', () => {
    const problems: string[] = [];
    const code = CODE_DIRS.flatMap((dir) =>
      filesBelow(join(ROOT, dir), (name) => /\.(ts|mjs|js)$/.test(name)),
    );
    assert.ok(code.length > 100, 'the walk found the sources');
    for (const file of code) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\bdocs\/([\w-]+\.md)(#[\w-]+)?/g)) {
        const problem = problemOf(`${match[1]}${match[2] ?? ''}`, join(ROOT, 'docs', 'x.md'));
        if (problem !== undefined) problems.push(`${relative(ROOT, file)}: ${problem}`);
      }
      if (/\bSPEC §|\.\.\/shared\//.test(text) && file.includes(`${join(ROOT, 'src')}`)) {
        problems.push(`${relative(ROOT, file)}: cites a document outside the repository`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('every relative link of the README and the docs resolves', () => {
    const problems: string[] = [];
    const pages = [
      join(ROOT, 'README.md'),
      ...filesBelow(join(ROOT, 'docs'), (name) => name.endsWith('.md')),
    ];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const problem = problemOf(target, page);
        if (problem !== undefined) problems.push(`${relative(ROOT, page)}: ${problem}`);
      }
    }
    assert.deepEqual(problems, []);
  });
});
