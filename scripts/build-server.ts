/**
 * Bundles the server into dist/ with esbuild, and primes V8's code cache for it. Run by `npm run
 * build` (and so by `npm ci`, through `prepare`). Why a bundle and not tsc's file-for-file output:
 * Node resolving, reading and compiling some 500 modules one by one was most of the start-up time
 * (issue 11; docs/performance.md#start-up-issue-11). Type checking stays `npm run typecheck`.
 *
 * Two files come out:
 * - `dist/server.cjs`: src/start.ts and everything it imports, packages included, as one CommonJS
 *   file. CommonJS because the entry compiles it with node:vm and a code cache (src/boot/), which
 *   Node 20 offers for scripts but not for ES modules. The modules the server needs only once the
 *   config is valid (the app, fastify, the routes) are imported dynamically in src/start.ts: esbuild
 *   keeps them uninitialised until then, so an invalid config runs none of them.
 * - `dist/main.js`: the entry (src/boot/main.ts), which compiles the bundle with a code cache.
 *
 * What a bundle would otherwise change, and how it is kept as it was:
 * - A module's own location (`import.meta.url` in ESM, `__dirname`/`__filename` in CommonJS
 *   packages) would become the bundle's. Every module that reads it gets the location of its own
 *   source file instead, expressed relative to the bundle at run time, so paths such as
 *   `../../package.json`, the SRT addon or Swagger UI's static files resolve as before (and the
 *   checkout can still be moved as a whole).
 * - The packages' `require` of Node's built-ins (and of the SRT addon, by a computed path) is the
 *   entry's `createRequire` for the bundle's path.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { SERVER_BUNDLE } from '../src/boot/code-cache.js';
import { primeCodeCache } from './prime-code-cache.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEFAULT_SERVER_OUT = fileURLToPath(new URL('../dist/', import.meta.url));

/** Set up by the banner: a path relative to the bundle, as a URL / a file path. */
const LOCATE_URL = '__streamcoreLocateUrl';
const LOCATE_PATH = '__streamcoreLocatePath';

// `__dirname` here is the entry's wrapper argument: the folder of the bundle.
const BANNER = [
  `const ${LOCATE_PATH} = (path) => require('node:path').resolve(__dirname, path);`,
  `const ${LOCATE_URL} = (path) => require('node:url').pathToFileURL(${LOCATE_PATH}(path)).href;`,
].join('\n');

export async function buildServer(outDir: string = DEFAULT_SERVER_OUT): Promise<void> {
  // Earlier builds' files (chunks of the former ES-module bundle, code caches of an older bundle)
  // must not pile up. dist/web/ is the dashboard's (scripts/build-dashboard.ts).
  const previous = await readdir(outDir).catch(() => []);
  await Promise.all(
    previous
      .filter((name) => name !== 'web')
      .map((name) => rm(join(outDir, name), { recursive: true, force: true })),
  );
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/start.ts'],
    outfile: join(outDir, SERVER_BUNDLE),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // Whitespace and comments only, names stay (stack traces still name every function): 4.1 MB
    // becomes 2.8 MB, which V8 reads, hashes and checks against the code cache about 20 ms faster
    // per start (issue 11).
    minifyWhitespace: true,
    banner: { js: BANNER },
    plugins: [ownLocation(outDir)],
    logLevel: 'warning',
  });
  await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/boot/main.ts'],
    outfile: join(outDir, 'main.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
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
  const outDir = process.argv[2] ?? DEFAULT_SERVER_OUT;
  await buildServer(outDir);
  await primeCodeCache(join(outDir, 'main.js'));
}
