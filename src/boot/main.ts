/**
 * The built server's entry (dist/main.js, what `npm start` runs). It compiles the server bundle
 * (dist/server.cjs: src/start.ts and everything it imports) with V8's code cache and starts it;
 * when there was no usable cache, it writes one once the server listens, so that the next start
 * reads it (src/boot/code-cache.ts). Imports nothing of the server itself: it is bundled on its own.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script, constants as vmConstants } from 'node:vm';
import { codeCacheFile, readCodeCache, SERVER_BUNDLE, writeCodeCache } from './code-cache.js';
import type { StartHooks } from './start-hooks.js';

const distDir = dirname(fileURLToPath(import.meta.url));
const bundleFile = join(distDir, SERVER_BUNDLE);
const bundleBytes = readFileSync(bundleFile);
const cacheFile = codeCacheFile(distDir, bundleBytes);
const cache = readCodeCache(cacheFile);

// Wrapped as Node wraps a CommonJS module, on the same line: the bundle's line numbers (and its
// source map) stay those of the file.
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${bundleBytes.toString('utf8')}\n})`,
  {
    filename: bundleFile,
    cachedData: cache.state === 'found' ? cache.data : undefined,
    // The bundle has no import() of its own; should a package ever bring one, Node resolves it.
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  },
);
const rejected = cache.state === 'found' && script.cachedDataRejected === true;

const bundle = { exports: {} as { runServer: (hooks: StartHooks) => void } };
(script.runInThisContext() as (...args: unknown[]) => void)(
  bundle.exports,
  createRequire(bundleFile),
  bundle,
  bundleFile,
  distDir,
);

bundle.exports.runServer({
  listening(logger) {
    if (cache.state === 'found' && !rejected) return;
    // Once the listener is open: the cache then holds every function the start has compiled.
    setImmediate(() => {
      const why = cache.state === 'found' ? 'rejected by V8' : cache.state;
      // A damaged file means the disk changed it: worth a line even though it heals itself.
      if (cache.state === 'damaged') logger.warn({ file: cacheFile }, 'code cache damaged, rewriting it');
      try {
        writeCodeCache(cacheFile, script.createCachedData());
        logger.debug({ file: cacheFile, was: why }, 'code cache written');
      } catch (error) {
        logger.debug({ err: error, file: cacheFile, was: why }, 'code cache not written');
      }
    });
  },
});
