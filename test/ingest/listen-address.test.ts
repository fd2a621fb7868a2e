import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Config } from '../../src/config/index.js';
import { acceptsTcp, udpTaken } from '../helpers/listener-probe.js';
import { startServer, type DeepPartial } from '../helpers/server.js';
import { SRT_SKIP } from './srt-support.js';

interface LogLine {
  level: number;
  msg: string;
  key?: string;
  loopbackOnly?: boolean;
}

/** Starts the server with RTMP and SRT on `:0`-style addresses and collects its log lines. */
async function startIngest(ingest: DeepPartial<Config>): Promise<{
  lines: LogLine[];
  rtmpPort: number;
  srtPort: number;
  close: () => Promise<void>;
}> {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  const server = await startServer({ config: ingest, logger });
  const rtmpPort = server.app.ingest.rtmp?.ports()[0];
  const srtPort = server.app.ingest.srt?.port();
  assert.ok(rtmpPort !== undefined && srtPort !== undefined, 'both ingest servers listen');
  return { lines, rtmpPort, srtPort, close: () => server.close() };
}

function tokenWarnings(lines: readonly LogLine[], tokenKey: string): LogLine[] {
  return lines.filter((line) => line.level === 40 && line.msg.startsWith(`${tokenKey} is empty`));
}

describe('ingest without a token listens on loopback only (issue 24 item 10)', { skip: SRT_SKIP }, () => {
  it('binds :port to 127.0.0.1 when rtmp.token and srt.token are empty, and warns naming each key', async () => {
    const ingest = await startIngest({
      rtmp: { enable: true, address: ':0', token: '' },
      srt: { enable: true, address: ':0', token: '', passphrase: 'a-passphrase-not-a-token' },
    });
    try {
      assert.equal(await acceptsTcp('127.0.0.1', ingest.rtmpPort), true, 'RTMP answers on 127.0.0.1');
      assert.equal(await acceptsTcp('127.0.0.2', ingest.rtmpPort), false, 'RTMP is not on every interface');
      assert.equal(await udpTaken('127.0.0.2', ingest.srtPort), false, 'SRT is not on every interface');
      for (const [tokenKey, key] of [
        ['rtmp.token', 'rtmp.address'],
        ['srt.token', 'srt.address'],
      ] as const) {
        const warnings = tokenWarnings(ingest.lines, tokenKey);
        assert.equal(warnings.length, 1, `one warning naming ${tokenKey}`);
        assert.equal(warnings[0]?.key, key);
        assert.equal(warnings[0]?.loopbackOnly, true);
      }
    } finally {
      await ingest.close();
    }
  });

  it('binds every interface when the token is set, without a warning', async () => {
    const ingest = await startIngest({
      rtmp: { enable: true, address: ':0', token: 'rtmp-secret' },
      srt: { enable: true, address: ':0', token: 'srt-secret' },
    });
    try {
      assert.equal(await acceptsTcp('127.0.0.2', ingest.rtmpPort), true);
      assert.equal(await udpTaken('127.0.0.2', ingest.srtPort), true);
      assert.deepEqual(tokenWarnings(ingest.lines, 'rtmp.token'), []);
      assert.deepEqual(tokenWarnings(ingest.lines, 'srt.token'), []);
    } finally {
      await ingest.close();
    }
  });

  it('binds a host named on purpose without a token, and still warns', async () => {
    // 0.0.0.0 is named on purpose here; the test only connects over loopback.
    const ingest = await startIngest({
      rtmp: { enable: true, address: '0.0.0.0:0', token: '' },
      srt: { enable: true, address: '0.0.0.0:0', token: '' },
    });
    try {
      assert.equal(await acceptsTcp('127.0.0.2', ingest.rtmpPort), true);
      assert.equal(await udpTaken('127.0.0.2', ingest.srtPort), true);
      for (const tokenKey of ['rtmp.token', 'srt.token']) {
        const warnings = tokenWarnings(ingest.lines, tokenKey);
        assert.equal(warnings.length, 1, `one warning naming ${tokenKey}`);
        assert.equal(warnings[0]?.loopbackOnly, false);
      }
    } finally {
      await ingest.close();
    }
  });
});
