// Builds one of the Node-API addons under native/ with npm's own node-gyp and the Node headers
// beside this node binary (build-srt-addon.mjs, build-malloc-trim-addon.mjs). Nothing is
// downloaded: without headers it refuses rather than let node-gyp fetch them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Node's headers: npm's `nodedir` setting, else the include directory beside this node binary. */
export function nodeDir() {
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

/** `node-gyp rebuild` in `addonDir` against `headersDir` (from `nodeDir`); its exit status. */
export function buildAddon(addonDir, headersDir) {
  const [command, ...prefixArgs] = nodeGyp();
  const result = spawnSync(command, [...prefixArgs, 'rebuild', `--nodedir=${headersDir}`, '--jobs=2'], {
    cwd: addonDir,
    stdio: 'inherit',
  });
  return result.status ?? 1;
}
