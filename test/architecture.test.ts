import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { folderCycles, readImportGraph, upwardImports } from '../scripts/import-graph.js';

const SRC = join(import.meta.dirname, '..', 'src');

/**
 * The folder tree of src/ reads from the top down (docs/architecture.md): no file imports from a
 * folder that contains its own, and the folders import each other without cycles.
 */
describe('architecture: the import graph of src/', () => {
  it('has no upward import', () => {
    const upward = upwardImports(readImportGraph(SRC)).map((item) => `${item.fromFile} -> ${item.toFile}`);
    assert.deepEqual(upward, []);
  });

  it('has no cycle between folders', () => {
    assert.deepEqual(
      folderCycles(readImportGraph(SRC)).map((cycle) => cycle.join(' -> ')),
      [],
    );
  });

  it('keeps config/ a base layer: it imports persistence only, no domain folder', () => {
    // Every domain reads the config; a config that reads a domain ties the two in a knot (issue 25).
    const imported = readImportGraph(SRC)
      .imports.filter((item) => item.from === 'config' && item.to !== 'persistence')
      .map((item) => `${item.fromFile} -> ${item.toFile}`);
    assert.deepEqual(imported, []);
  });

  describe('the check itself, on a small tree', () => {
    let dir: string | undefined;
    after(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));

    it('finds an upward import and a cycle, and counts lines per folder', async () => {
      dir = await mkdtemp(join(tmpdir(), 'streamcore-graph-'));
      const files: Record<string, string> = {
        'app.ts': "import { a } from './a/index.js';\nexport const app = a;\n",
        'a/index.ts': "export { a } from './inner/x.js';\n",
        'a/inner/x.ts': "import type { B } from '../../b/b.js';\nexport const a = 1;\nexport type X = B;\n",
        'a/inner/up.ts': "import { a } from '../index.js';\nexport const up = a;\n",
        'b/b.ts': "import { a } from '../a/inner/x.js';\nexport type B = typeof a;\n",
        'c/c.ts': "export const c = await import('../b/b.js');\n",
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      const graph = readImportGraph(dir);
      assert.deepEqual(
        upwardImports(graph).map((item) => `${item.fromFile} -> ${item.toFile}`),
        ['a/inner/up.ts -> a/index.ts'],
      );
      assert.deepEqual(folderCycles(graph), [
        ['a', 'a/inner', 'a'],
        ['a/inner', 'b', 'a/inner'],
      ]);
      assert.deepEqual(graph.folders.get('a/inner'), { files: 2, lines: 5 });
      assert.ok(
        graph.imports.some((item) => item.from === 'c' && item.to === 'b'),
        'dynamic import',
      );
    });
  });
});
