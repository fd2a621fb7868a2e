// Builds the SRT ingest addon (native/srt) at `npm ci` / `npm install` when libsrt is installed
// (Debian: libsrt-openssl-dev, see scripts/install-system-deps.sh). Without libsrt it says so and
// exits 0: the server runs, and only `srt.enable: true` is refused (docs/ingest.md).
// Nothing is downloaded: node-gyp uses the Node headers installed beside this node binary.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildAddon, nodeDir, ROOT } from './node-addon-build.mjs';

const addonDir = join(ROOT, 'native', 'srt');

if (process.env.STREAMCORE_SKIP_SRT === '1') {
  console.log('streamcore: STREAMCORE_SKIP_SRT=1, the SRT addon is not built (srt.enable unavailable).');
  process.exit(0);
}

try {
  execFileSync('pkg-config', ['--exists', 'srt'], { stdio: 'ignore' });
} catch {
  console.log(
    'streamcore: libsrt not found (pkg-config srt); the SRT addon is not built and srt.enable is ' +
      'unavailable. Install libsrt-openssl-dev (scripts/install-system-deps.sh) and run `npm run build:srt`.',
  );
  process.exit(0);
}

const dir = nodeDir();
if (dir === undefined) {
  console.error(
    'streamcore: no Node headers beside this node binary and no npm nodedir; refusing to let ' +
      'node-gyp download them. Set nodedir (npm config) or STREAMCORE_SKIP_SRT=1.',
  );
  process.exit(1);
}
const status = buildAddon(addonDir, dir);
if (status !== 0) {
  console.error(
    'streamcore: building the SRT addon failed although libsrt is installed (see above). ' +
      'Fix the toolchain, or set STREAMCORE_SKIP_SRT=1 to install without SRT ingest.',
  );
  process.exit(status);
}
console.log('streamcore: SRT addon built (native/srt/build/Release/srt_ingest.node).');
