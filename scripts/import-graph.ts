/**
 * The folder import graph of `src/` (docs/architecture.md): which folder's files import which
 * other folder's, computed from the relative import specifiers of the sources. Two rules keep the
 * tree readable from the top down, checked by test/architecture.test.ts:
 *
 * - no folder imports upward: a file never imports a file of a folder that contains its own
 *   (`process/service/x.ts` may not import `process/collector.ts` or `src/app.ts`); the folder
 *   above composes its rooms, the rooms do not reach back;
 * - no cycles between folders, nor between the top-level folders (the domains) they belong to: when
 *   `process/config` imports `config`, no room of `config` imports a room of `process`, since
 *   that import points up the layering (`config/validate.ts` -> `process/access`) even though no
 *   two folders form a cycle;
 * - no cycles between the files of one folder (`evaluate.ts` -> `evaluate-history.ts` ->
 *   `evaluate.ts`): a cycle of files is one concept cut in two, or a shared piece waiting for
 *   its own file.
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
  /** Imports between two files of the same folder. */
  innerImports: FolderImport[];
}

// `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')`; type-only ones too,
// since a type import ties the folders together just as much for a reader.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']*)'/g;

/** Reads every `.ts` file under `root` and the folder-crossing relative imports between them. */
export function readImportGraph(root: string): ImportGraph {
  const folders = new Map<string, { files: number; lines: number }>();
  const imports: FolderImport[] = [];
  const innerImports: FolderImport[] = [];
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
      const item = { from, to, fromFile: posix(relative(root, file)), toFile: posix(relative(root, target)) };
      (to === from ? innerImports : imports).push(item);
    }
  }
  return { folders, imports, innerImports };
}

/** Imports into a folder that contains the importing file's folder. */
export function upwardImports(graph: ImportGraph): FolderImport[] {
  return graph.imports.filter(({ from, to }) => to === '.' || from.startsWith(`${to}/`));
}

/** The cycles of the folder graph, each as the folders along it (first repeated at the end). */
export function folderCycles(graph: ImportGraph): string[][] {
  return cyclesOf(folderEdges(graph));
}

/** A cycle between top-level folders: the folders along it and, per step, the imports making it. */
export interface DomainCycle {
  domains: string[];
  /** `steps[i]`: the `from -> to` file pairs that import `domains[i + 1]` from `domains[i]`. */
  steps: string[][];
}

/** The cycles between top-level folders (the root, which composes them all, left out). */
export function domainCycles(graph: ImportGraph): DomainCycle[] {
  const steps = new Map<string, string[]>();
  for (const item of graph.imports) {
    const from = domainOf(item.from);
    const to = domainOf(item.to);
    if (from === to || from === '.') continue;
    const key = `${from} ${to}`;
    steps.set(key, [...(steps.get(key) ?? []), `${item.fromFile} -> ${item.toFile}`]);
  }
  const edges = new Map<string, string[]>();
  for (const key of [...steps.keys()].sort()) {
    const [from, to] = key.split(' ') as [string, string];
    edges.set(from, [...(edges.get(from) ?? []), to]);
  }
  return cyclesOf(edges).map((domains) => ({
    domains,
    steps: domains.slice(1).map((to, index) => steps.get(`${domains[index]} ${to}`) ?? []),
  }));
}

/**
 * The imports of the steps every cycle takes: usually the one import that points up the layering
 * (the cycles found through it share it), named in the test's message.
 */
export function importsOnEveryCycle(cycles: DomainCycle[]): string[] {
  const stepsOf = (cycle: DomainCycle): string[] => cycle.steps.map((imports) => imports.join(', '));
  const [first, ...rest] = cycles;
  if (first === undefined) return [];
  return stepsOf(first).filter((step) => rest.every((cycle) => stepsOf(cycle).includes(step)));
}

/** The cycles between files of one folder, each as the files along it (first repeated at the end). */
export function fileCycles(graph: ImportGraph): string[][] {
  const edges = new Map<string, string[]>();
  for (const { fromFile, toFile } of graph.innerImports) {
    const targets = edges.get(fromFile) ?? [];
    if (!targets.includes(toFile)) targets.push(toFile);
    edges.set(fromFile, targets.sort());
  }
  return cyclesOf(new Map([...edges].sort(([a], [b]) => a.localeCompare(b))));
}

/** The cycles a depth-first walk of `edges` meets, each closed by an edge back into its path. */
function cyclesOf(edges: Map<string, string[]>): string[][] {
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

function domainOf(folder: string): string {
  return folder.split('/')[0] as string;
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
  const domains = domainCycles(graph);
  const files = fileCycles(graph);
  console.log('');
  console.log(
    `upward imports: ${upward.length}, cycles: ${cycles.length}, between domains: ${domains.length}, between files: ${files.length}`,
  );
  for (const item of upward) console.log(`  upward: ${item.fromFile} -> ${item.toFile}`);
  for (const cycle of cycles) console.log(`  cycle: ${cycle.join(' -> ')}`);
  for (const { domains: cycle } of domains) console.log(`  domains: ${cycle.join(' -> ')}`);
  for (const step of importsOnEveryCycle(domains)) console.log(`  on every cycle between domains: ${step}`);
  for (const cycle of files) console.log(`  files: ${cycle.join(' -> ')}`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  printMarkdown(fileURLToPath(new URL('../src/', import.meta.url)));
}
