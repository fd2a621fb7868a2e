/**
 * Bundles the server (src/main.ts and everything it imports, packages included) into dist/ with
 * esbuild. Run by `npm run build`. Why a bundle and not tsc's file-for-file output: Node resolving,
 * reading and compiling some 500 modules one by one was most of the start-up time (issue 11;
 * docs/performance.md "Start-up"). Type checking stays `npm run typecheck` (part of `npm test`).
 *
 * What a bundle would otherwise change, and how it is kept as it was:
 * - A module's own location (`import.meta.url` in ESM, `__dirname`/`__filename` in CommonJS
 *   packages) would become the bundle's. Every module that reads it gets the location of its own
 *   source file instead, expressed relative to the bundle at run time, so paths such as
 *   `../../package.json`, the SRT addon or Swagger UI's static files resolve as before (and the
 *   checkout can still be moved as a whole).
 * - CommonJS packages call `require` for Node's built-ins: each output file gets a `require` made
 *   with `createRequire` (the SRT addon is loaded through one too, with a computed path).
 * - The entry imports the server's modules only after the config is valid (src/main.ts): with
 *   code splitting they are a chunk of their own, so an invalid config loads none of them.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEFAULT_SERVER_OUT = fileURLToPath(new URL('../dist/', import.meta.url));

/** Set up by the banner: a path relative to the output file that runs, as a URL / a file path. */
const LOCATE_URL = '__streamcoreLocateUrl';
const LOCATE_PATH = '__streamcoreLocatePath';

const BANNER = [
  `import { createRequire as __streamcoreCreateRequire } from 'node:module';`,
  `import { fileURLToPath as __streamcoreFileURLToPath } from 'node:url';`,
  `const require = __streamcoreCreateRequire(import.meta.url);`,
  `const ${LOCATE_URL} = (path) => new URL(path, import.meta.url).href;`,
  `const ${LOCATE_PATH} = (path) => __streamcoreFileURLToPath(new URL(path, import.meta.url));`,
].join('\n');

export async function buildServer(outDir: string = DEFAULT_SERVER_OUT): Promise<void> {
  // Chunk names carry a content hash: stale ones from an earlier build (and tsc's folders from
  // before the bundle) must not pile up. dist/web/ is the dashboard's (scripts/build-dashboard.ts).
  const previous = await readdir(outDir).catch(() => []);
  await Promise.all(
    previous
      .filter((name) => name !== 'web')
      .map((name) => rm(join(outDir, name), { recursive: true, force: true })),
  );
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/main.ts'],
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    banner: { js: BANNER },
    plugins: [ownLocation(outDir)],
    logLevel: 'warning',
  });
}

/**
 * Rewrites each module that reads its own location to read where its source file is (see the
 * header). Chunks are written straight into `outDir`, so one relative path serves every chunk.
 */
function ownLocation(outDir: string): Plugin {
  const LOCATION = /\bimport\.meta\.(url|dirname|filename)\b|\b__(dirname|filename)\b/;
  return {
    name: 'own-location',
    setup(builder) {
      builder.onLoad({ filter: /\.(ts|js|cjs|mjs)$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        if (!LOCATION.test(text)) return undefined;
        const file = JSON.stringify(relative(outDir, args.path));
        const folder = JSON.stringify(relative(outDir, dirname(args.path)));
        const contents = isCommonJs(args.path, text)
          ? // Declared inside the module's wrapper function: only this module sees them.
            `var __filename = ${LOCATE_PATH}(${file}), __dirname = ${LOCATE_PATH}(${folder});\n${text}`
          : text
              .replaceAll('import.meta.url', `${LOCATE_URL}(${file})`)
              .replaceAll('import.meta.filename', `${LOCATE_PATH}(${file})`)
              .replaceAll('import.meta.dirname', `${LOCATE_PATH}(${folder})`);
        return {
          contents,
          loader: extname(args.path) === '.ts' ? 'ts' : 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
}

/** A package file in CommonJS (`__dirname` is its own); ESM sources use `import.meta`. */
function isCommonJs(path: string, text: string): boolean {
  if (path.endsWith('.cjs')) return true;
  if (path.endsWith('.mjs') || path.endsWith('.ts')) return false;
  return /\b(module\.exports|exports\.|require\()/.test(text) && !/\bimport\.meta\b/.test(text);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildServer(process.argv[2]);
}
