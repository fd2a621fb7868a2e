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

/** What became of the code cache: used, or why the start compiled without it. */
type CacheState = 'found' | 'missing' | 'damaged' | 'rejected by V8';

const distDir = dirname(fileURLToPath(import.meta.url));
const bundleFile = join(distDir, SERVER_BUNDLE);
const { script, cacheFile, cacheState } = compileBundle();

/**
 * Compiles the bundle with its code cache. Only the compiled script and the cache's state leave
 * this function: the bundle's bytes and the cache's (2.4 MB) are garbage once V8 has read them, and
 * a closure that kept `cache` would keep them for the life of the process (issue 31).
 */
function compileBundle(): { script: Script; cacheFile: string; cacheState: CacheState } {
  const source = readWrappedBundle();
  const file = codeCacheFile(distDir, source.bundle);
  const cache = readCodeCache(file);
  const compiled = new Script(source.text, {
    filename: bundleFile,
    cachedData: cache.state === 'found' ? cache.data : undefined,
    // The bundle has no import() of its own; should a package ever bring one, Node resolves it.
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const rejected = cache.state === 'found' && compiled.cachedDataRejected === true;
  return { script: compiled, cacheFile: file, cacheState: rejected ? 'rejected by V8' : cache.state };
}

/**
 * The bundle wrapped as Node wraps a CommonJS module, on the same line (the bundle's line numbers,
 * and so its source map, stay those of the file), and its bytes. The wrapper and the file are
 * joined as bytes and decoded once: joining strings would leave a second copy of the 2.8 MB
 * source on V8's heap until its next full collection (issue 31).
 */
function readWrappedBundle(): { text: string; bundle: Buffer } {
  const bundle = readFileSync(bundleFile);
  const wrapped = Buffer.concat([
    Buffer.from('(function (exports, require, module, __filename, __dirname) {'),
    bundle,
    Buffer.from('\n})'),
  ]);
  return { text: wrapped.toString('utf8'), bundle };
}

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
    if (cacheState === 'found') return;
    // Once the listener is open: the cache then holds every function the start has compiled.
    setImmediate(() => {
      // A damaged file means the disk changed it: worth a line even though it heals itself.
      if (cacheState === 'damaged') logger.warn({ file: cacheFile }, 'code cache damaged, rewriting it');
      try {
        writeCodeCache(cacheFile, script.createCachedData());
        logger.debug({ file: cacheFile, was: cacheState }, 'code cache written');
      } catch (error) {
        logger.debug({ err: error, file: cacheFile, was: cacheState }, 'code cache not written');
      }
    });
  },
});
