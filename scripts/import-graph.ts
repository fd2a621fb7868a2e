/**
 * The folder import graph of `src/` (docs/architecture.md): which folder's files import which
 * other folder's, computed from the relative import specifiers of the sources. Two rules keep the
 * tree readable from the top down, checked by test/architecture.test.ts:
 *
 * - no folder imports upward: a file never imports a file of a folder that contains its own
 *   (`process/service/x.ts` may not import `process/collector.ts` or `src/app.ts`); the folder
 *   above composes its rooms, the rooms do not reach back;
 * - no cycles between folders.
 *
 * Run `node --import tsx scripts/import-graph.ts` to print the per-folder line counts and the
 * graph as Markdown tables (pasted into docs/architecture.md).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One relative import between two folders, with the files that make it. */
export interface FolderImport {
  /** Folder of the importing file, relative to the root (`.` for the root itself), `/`-separated. */
  from: string;
  to: string;
  /** The importing file and the imported one, relative to the root. */
  fromFile: string;
  toFile: string;
}

export interface ImportGraph {
  /** Every folder with TypeScript files, with its file count and lines. */
  folders: Map<string, { files: number; lines: number }>;
  /** Imports that cross folders. */
  imports: FolderImport[];
}

// `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`; type-only ones too,
// since a type import ties the folders together just as much for a reader.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']*)'/g;

/** Reads every `.ts` file under `root` and the folder-crossing relative imports between them. */
export function readImportGraph(root: string): ImportGraph {
  const folders = new Map<string, { files: number; lines: number }>();
  const imports: FolderImport[] = [];
  for (const file of tsFiles(root)) {
    const text = readFileSync(file, 'utf8');
    const from = folderOf(root, file);
    const entry = folders.get(from) ?? { files: 0, lines: 0 };
    entry.files++;
    entry.lines += text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    folders.set(from, entry);
    for (const match of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), match[1] as string).replace(/\.js$/, '.ts');
      const to = folderOf(root, target);
      if (to === from) continue;
      imports.push({
        from,
        to,
        fromFile: posix(relative(root, file)),
        toFile: posix(relative(root, target)),
      });
    }
  }
  return { folders, imports };
}

/** Imports into a folder that contains the importing file's folder. */
export function upwardImports(graph: ImportGraph): FolderImport[] {
  return graph.imports.filter(({ from, to }) => to === '.' || from.startsWith(`${to}/`));
}

/** The cycles of the folder graph, each as the folders along it (first repeated at the end). */
export function folderCycles(graph: ImportGraph): string[][] {
  const edges = folderEdges(graph);
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (folder: string): void => {
    state.set(folder, 'open');
    path.push(folder);
    for (const next of edges.get(folder) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(folder, 'done');
  };
  for (const folder of [...edges.keys()].sort()) if (state.get(folder) === undefined) visit(folder);
  return cycles;
}

/** The folders each folder imports, sorted. */
export function folderEdges(graph: ImportGraph): Map<string, string[]> {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of graph.imports) {
    const targets = edges.get(from) ?? new Set<string>();
    targets.add(to);
    edges.set(from, targets);
  }
  return new Map(
    [...edges].sort(([a], [b]) => a.localeCompare(b)).map(([from, to]) => [from, [...to].sort()]),
  );
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return tsFiles(path);
      return name.endsWith('.ts') ? [path] : [];
    });
}

function folderOf(root: string, file: string): string {
  return posix(relative(root, dirname(file))) || '.';
}

function posix(path: string): string {
  return path.split(sep).join('/');
}

function printMarkdown(root: string): void {
  const graph = readImportGraph(root);
  const edges = folderEdges(graph);
  console.log('| folder | files | lines | imports |');
  console.log('| ------ | ----: | ----: | ------- |');
  for (const [folder, { files, lines }] of [...graph.folders].sort(([a], [b]) => a.localeCompare(b))) {
    const name = folder === '.' ? 'src/' : `src/${folder}/`;
    console.log(`| \`${name}\` | ${files} | ${lines} | ${(edges.get(folder) ?? []).join(', ')} |`);
  }
  const upward = upwardImports(graph);
  const cycles = folderCycles(graph);
  console.log('');
  console.log(`upward imports: ${upward.length}, cycles: ${cycles.length}`);
  for (const item of upward) console.log(`  upward: ${item.fromFile} -> ${item.toFile}`);
  for (const cycle of cycles) console.log(`  cycle: ${cycle.join(' -> ')}`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  printMarkdown(fileURLToPath(new URL('../src/', import.meta.url)));
}
