import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  domainCycles,
  fileCycles,
  folderCycles,
  importsOnEveryCycle,
  readImportGraph,
  upwardImports,
} from '../scripts/import-graph.js';

const SRC = join(import.meta.dirname, '..', 'src');

/**
 * The folder tree of src/ reads from the top down (docs/architecture.md): no file imports from a
 * folder that contains its own, the folders and the top-level folders import each other without
 * cycles, and so do the files of one folder.
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

  it('has no cycle between top-level folders (an import up the layering)', () => {
    const cycles = domainCycles(readImportGraph(SRC));
    const culprits = importsOnEveryCycle(cycles);
    assert.deepEqual(
      cycles.map(({ domains }) => domains.join(' -> ')),
      [],
      `every one of these cycles runs through: ${culprits.join('; ') || '(no single step)'}\n` +
        cycles.map(({ domains, steps }) => `${domains.join(' -> ')}: ${steps.flat().join(', ')}`).join('\n'),
    );
  });

  it('has no cycle between the files of one folder', () => {
    const cycles = fileCycles(readImportGraph(SRC)).map((cycle) => cycle.join(' -> '));
    assert.deepEqual(cycles, [], `files importing each other:\n${cycles.join('\n')}`);
  });

  describe('the check itself, on a small tree', () => {
    let dir: string | undefined;
    after(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));

    it('finds an upward import, cycles of folders, of top-level folders and of files, and counts lines', async () => {
      dir = await mkdtemp(join(tmpdir(), 'streamcore-graph-'));
      const files: Record<string, string> = {
        'app.ts': "import { a } from './a/index.js';\nexport const app = a;\n",
        'a/index.ts': "export { a } from './inner/x.js';\n",
        'a/inner/x.ts': "import type { B } from '../../b/b.js';\nexport const a = 1;\nexport type X = B;\n",
        'a/inner/up.ts': "import { a } from '../index.js';\nexport const up = a;\n",
        'b/b.ts': "import { a } from '../a/inner/x.js';\nexport type B = typeof a;\n",
        'c/c.ts': "export const c = await import('../b/b.js');\n",
        'c/one.ts': "import { two } from './two.js';\nexport const one = two;\n",
        'c/two.ts':
          "import type { one } from './one.js';\nexport const two = 2;\nexport type One = typeof one;\n",
        'd/low.ts': "import { deep } from '../e/room/deep.js';\nexport const low = deep;\n",
        'e/room/deep.ts': 'export const deep = 1;\n',
        'e/use.ts': "import { low } from '../d/low.js';\nexport const use = low;\n",
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
      // d -> e/room and e -> d: no two folders form a cycle, the top-level folders do.
      const domains = domainCycles(graph);
      assert.deepEqual(
        domains.map(({ domains: cycle }) => cycle.join(' -> ')),
        ['a -> b -> a', 'd -> e -> d'],
      );
      assert.deepEqual(importsOnEveryCycle(domains.slice(1)), [
        'd/low.ts -> e/room/deep.ts',
        'e/use.ts -> d/low.ts',
      ]);
      assert.deepEqual(fileCycles(graph), [['c/one.ts', 'c/two.ts', 'c/one.ts']]);
      assert.deepEqual(graph.folders.get('a/inner'), { files: 2, lines: 5 });
      assert.ok(
        graph.imports.some((item) => item.from === 'c' && item.to === 'b'),
        'dynamic import',
      );
    });
  });
});
