// Runs every test file: first those that share nothing, several at a time, then those that
// measure the machine (RSS, CPU use, time-outs under a flood), one at a time, so that a neighbour's
// load never decides their outcome. A file asks to run alone with a line
// `// test-alone: <why>` near its top. Prints one closing line with the totals of both phases.
//
// Usage: node scripts/run-tests.mjs [file ...]   (default: every test/**/*.test.ts)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(ROOT, path));
  }
  return found.sort();
}

const ALONE = /^\/\/ test-alone: \S/m;
const files = process.argv.length > 2 ? process.argv.slice(2) : testFiles(join(ROOT, 'test'));
const alone = files.filter((file) => ALONE.test(readFileSync(join(ROOT, file), 'utf8').slice(0, 4096)));
const together = files.filter((file) => !alone.includes(file));
// Most files wait on real time (ffmpeg at its real rate, servers' timers): one more than the
// cores keeps the CPUs busy without making any file wait for a core for long.
const concurrency = Number(process.env.TEST_CONCURRENCY ?? availableParallelism() + 1);

/** Runs node's test runner on `list`, passing its output through; resolves its counts. */
function run(list, jobs) {
  return new Promise((resolve) => {
    if (list.length === 0) return resolve({ pass: 0, fail: 0, code: 0 });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=tap', `--test-concurrency=${jobs}`, ...list],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const counts = { pass: 0, fail: 0 };
    let pending = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const total = /^# (pass|fail) (\d+)$/.exec(line);
        if (total !== null) counts[total[1]] = Number(total[2]);
      }
    });
    child.on('close', (code) => resolve({ ...counts, code: code ?? 1 }));
  });
}

const started = Date.now();
const first = await run(together, concurrency);
const second = await run(alone, 1);
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(
  `# ${together.length} files ${concurrency} at a time, then ${alone.length} alone; ${minutes} min`,
);
console.log(`tests: ${first.pass + second.pass} passed, ${first.fail + second.fail} failed`);
process.exit(first.code !== 0 || second.code !== 0 ? 1 : 0);
