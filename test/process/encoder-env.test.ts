import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { defaultConfig } from '../../src/config/schema.js';
import { createEncoderSpawn } from '../../src/process/index.js';

/** What a child started through `start` finds in its /proc/self/environ, one variable per line. */
async function childEnvironment(
  start: Awaited<ReturnType<typeof createEncoderSpawn>>['spawn'],
  env: NodeJS.ProcessEnv | undefined,
): Promise<string> {
  const child = start('sh', ['-c', 'tr "\\0" "\\n" < /proc/self/environ'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    ...(env === undefined ? {} : { env }),
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 0, out);
  return out;
}

describe("encoders never get the server's CORE_* variables", () => {
  for (const sandbox of ['off', 'auto'] as const) {
    it(`with ffmpeg.sandbox ${sandbox}: neither from the spawn's env nor from the server's own`, async () => {
      const config = defaultConfig();
      config.ffmpeg.sandbox = sandbox;
      const encoders = await createEncoderSpawn({ config, logger: pino({ level: 'silent' }), spawn });
      // With bwrap installed (the install script adds it), `auto` is the sandboxed path.
      const bwrapHere = spawnSync('bwrap', ['--version']).status === 0;
      assert.equal(encoders.sandboxed, sandbox === 'auto' && bwrapHere);
      const given = await childEnvironment(encoders.spawn, {
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        CORE_API_AUTH_PASSWORD: 'given-secret',
      });
      assert.match(given, /^LANG=C\.UTF-8$/m, 'other variables pass');
      assert.doesNotMatch(given, /given-secret|^CORE_/m);

      process.env.CORE_API_AUTH_JWT_SECRET = 'inherited-secret';
      try {
        const inherited = await childEnvironment(encoders.spawn, undefined);
        assert.match(inherited, /^PATH=/m, 'the server environment is the default');
        assert.doesNotMatch(inherited, /inherited-secret|^CORE_/m);
      } finally {
        delete process.env.CORE_API_AUTH_JWT_SECRET;
      }
    });
  }
});
