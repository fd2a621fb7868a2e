// Builds the SRT ingest addon (native/srt) at `npm ci` / `npm install` when libsrt is installed
// (Debian: libsrt-openssl-dev, see scripts/install-system-deps.sh). Without libsrt it says so and
// exits 0: the server runs, and only `srt.enable: true` is refused (docs/ingest.md).
// Nothing is downloaded: node-gyp uses the Node headers installed beside this node binary.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const addonDir = join(root, 'native', 'srt');

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

/** Node's headers: npm's `nodedir` setting, else the include directory beside this node binary. */
function nodeDir() {
  const configured = process.env.npm_config_nodedir;
  if (configured) return configured;
  const prefix = resolve(dirname(process.execPath), '..');
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  return undefined;
}

/** npm's own node-gyp (npm hands its path to scripts), else one on PATH. */
function nodeGyp() {
  const bundled = process.env.npm_config_node_gyp;
  if (bundled && existsSync(bundled)) return [process.execPath, bundled];
  const npmDir = resolve(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  const beside = join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(beside)) return [process.execPath, beside];
  return ['node-gyp'];
}

const dir = nodeDir();
if (dir === undefined) {
  console.error(
    'streamcore: no Node headers beside this node binary and no npm nodedir; refusing to let ' +
      'node-gyp download them. Set nodedir (npm config) or STREAMCORE_SKIP_SRT=1.',
  );
  process.exit(1);
}
const [command, ...prefixArgs] = nodeGyp();
const result = spawnSync(command, [...prefixArgs, 'rebuild', `--nodedir=${dir}`, '--jobs=2'], {
  cwd: addonDir,
  stdio: 'inherit',
});
if (result.status !== 0) {
  console.error(
    'streamcore: building the SRT addon failed although libsrt is installed (see above). ' +
      'Fix the toolchain, or set STREAMCORE_SKIP_SRT=1 to install without SRT ingest.',
  );
  process.exit(result.status ?? 1);
}
console.log('streamcore: SRT addon built (native/srt/build/Release/srt_ingest.node).');
