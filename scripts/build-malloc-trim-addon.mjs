// Builds the malloc-trim addon (native/malloc-trim: glibc's malloc_trim, docs/performance.md
// "Memory") at `npm ci` / `npm install`. It needs only a C compiler; when it cannot be built the
// server runs all the same, only without giving freed malloc memory back (it logs so at start),
// so a failure here is reported and the install goes on.
import { join } from 'node:path';
import { buildAddon, nodeDir, ROOT } from './node-addon-build.mjs';

if (process.env.STREAMCORE_SKIP_MALLOC_TRIM === '1') {
  console.log('streamcore: STREAMCORE_SKIP_MALLOC_TRIM=1, the malloc-trim addon is not built.');
  process.exit(0);
}
const dir = nodeDir();
if (dir === undefined) {
  console.log(
    'streamcore: no Node headers beside this node binary and no npm nodedir; the malloc-trim addon ' +
      'is not built (the server keeps freed malloc memory). Set nodedir (npm config) and run ' +
      '`npm run build:malloc-trim`.',
  );
  process.exit(0);
}
if (buildAddon(join(ROOT, 'native', 'malloc-trim'), dir) !== 0) {
  console.log(
    'streamcore: building the malloc-trim addon failed (see above); the server runs without it ' +
      '(it keeps freed malloc memory). Fix the toolchain and run `npm run build:malloc-trim`.',
  );
  process.exit(0);
}
console.log('streamcore: malloc-trim addon built (native/malloc-trim/build/Release/malloc_trim.node).');
