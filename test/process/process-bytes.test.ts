import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PROCESS_PARTS, type ProcessPart } from '../../src/process/api/api-shapes.js';
import {
  configBytesOf,
  processBytes,
  processListBytes,
  processListPieces,
  reportBytesOf,
} from '../../src/process/api/process-bytes.js';
import { processView, reportView } from '../../src/process/api/views.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, waitFor } from './support.js';

/** Every subset of the parts a client can ask for (`filter`), the empty one included. */
const PART_SETS: ReadonlySet<ProcessPart>[] = Array.from(
  { length: 1 << PROCESS_PARTS.length },
  (_, mask) => new Set(PROCESS_PARTS.filter((_, bit) => (mask & (1 << bit)) !== 0)),
);

// The process routes answer from cached per-process fragments (process-bytes.ts); these must be the
// bytes of the straightforward path, `JSON.stringify(processView(…))`, whatever the processes do.
describe('process answers from cached fragments', () => {
  let server: TestServer;
  // A clock that stands still while both paths encode, so runtimes agree to the second.
  let clock = Date.now();
  before(async () => {
    server = await startServer({ now: () => clock });
  });
  after(() => server.close());

  it('are byte for byte the straightforward encoding, for every filter, while processes run, end, restart and change', async () => {
    const running = { ...lavfiProcess('running'), autostart: true };
    await ok(server, 'POST', '/process', running);
    await ok(server, 'POST', '/process', {
      ...lavfiProcess('quote"and\\back-ü', { reference: 'ref "x"' }),
      input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-f', 'lavfi', '-t', '1'] }],
      autostart: true,
    });
    await ok(server, 'POST', '/process', lavfiProcess('idle'));
    await ok(server, 'PUT', '/process/idle/metadata/note', { nested: ['a', 1, null], text: 'ünï "q"' });
    await waitFor(
      async () =>
        (
          await ok<{ exec: string }>(
            server,
            'GET',
            `/process/${encodeURIComponent('quote"and\\back-ü')}/state`,
          )
        ).exec === 'finished',
      15_000,
      'the short process to finish',
    );

    const service = server.app.processes;
    let compared = 0;
    const compareAll = (): void => {
      clock += 370;
      const entries = service.sortedEntries();
      for (const parts of PART_SETS) {
        const expected = JSON.stringify(entries.map((entry) => processView(service, entry, parts)));
        assert.equal(
          processListBytes(service, entries, parts).toString('utf8'),
          expected,
          [...parts].join(','),
        );
        for (const entry of entries) {
          assert.equal(
            processBytes(service, entry, parts).toString('utf8'),
            JSON.stringify(processView(service, entry, parts)),
            `${entry.config.id} ${[...parts].join(',')}`,
          );
        }
      }
      for (const entry of entries) {
        assert.equal(configBytesOf(entry).toString('utf8'), JSON.stringify(entry.config));
        assert.equal(reportBytesOf(entry).toString('utf8'), JSON.stringify(reportView(entry)));
        compared++;
      }
    };

    for (let round = 0; round < 12; round++) {
      compareAll();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Changes that must show at once: a restart (history), an update (new config), metadata.
    await ok(server, 'PUT', '/process/running/command', { command: 'restart' });
    compareAll();
    await ok(server, 'PUT', '/process/running', { ...running, options: ['-loglevel', 'info', '-nostats'] });
    compareAll();
    await ok(server, 'PUT', '/process/idle/metadata/note', 'changed');
    compareAll();
    for (let round = 0; round < 12; round++) {
      compareAll();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const report = reportView(service.entry('running'));
    assert.ok(report.history.length > 0, 'the restart left a run in the history');
    assert.ok(compared > 0);

    // Over HTTP the list is the same JSON the views describe.
    const list = await ok<{ id: string }[]>(server, 'GET', '/process');
    assert.deepEqual(
      list.map((process) => process.id),
      service.sortedEntries().map((entry) => entry.config.id),
    );
  });

  it('stay the straightforward encoding while random changes and questions interleave', async () => {
    const service = server.app.processes;
    // Deterministic so that a failure can be replayed.
    const random = seededRandom(16);
    const ids = ['r-0', 'r-1', 'r-2', 'r-3'];
    const existing = new Set<string>();
    const config = (id: string): Record<string, unknown> => {
      // r-3 reads r-0's output when r-0 exists: its command line follows r-0's config.
      const input =
        id === 'r-3' && existing.has('r-0')
          ? [{ id: 'in', address: '#r-0:output=out', options: [] }]
          : [
              {
                id: 'in',
                address: `testsrc=size=32x24:rate=${5 + Math.floor(random() * 20)}`,
                options: ['-re', '-f', 'lavfi'],
              },
            ];
      return {
        ...lavfiProcess(id),
        input,
        autostart: random() < 0.7,
        reference: random() < 0.5 ? 'ref' : '',
      };
    };
    let compared = 0;
    const reused = Buffer.alloc(1 << 20, '#');
    const done = new Set<string>();
    const note = (what: string, status: number): boolean => {
      if (status === 200) done.add(what);
      return status === 200;
    };
    for (let step = 0; step < 120; step++) {
      const id = ids[Math.floor(random() * ids.length)] as string;
      const roll = random();
      if (!existing.has(id)) {
        if (
          note(
            id === 'r-3' && existing.has('r-0') ? 'create reader' : 'create',
            (await call(server, 'POST', '/process', config(id))).status,
          )
        )
          existing.add(id);
      } else if (roll < 0.15) {
        note('update', (await call(server, 'PUT', `/process/${id}`, config(id))).status);
      } else if (roll < 0.25) {
        // Refused while another process reads its output.
        if (note('delete', (await call(server, 'DELETE', `/process/${id}`)).status)) existing.delete(id);
      } else if (roll < 0.5) {
        const command = (['start', 'stop', 'restart'] as const)[Math.floor(random() * 3)] ?? 'start';
        note(command, (await call(server, 'PUT', `/process/${id}/command`, { command })).status);
      } else if (roll < 0.6) {
        note(
          'metadata',
          (await call(server, 'PUT', `/process/${id}/metadata/m`, { n: Math.floor(random() * 100) })).status,
        );
      }
      // Questions at random moments: at once, or after the processes reported, stalled, ran on.
      await new Promise((resolve) => setTimeout(resolve, random() < 0.5 ? 0 : random() * 600));
      clock = Date.now() + Math.floor(random() * 3) * 1000;
      for (let repeat = 0; repeat < 2; repeat++) {
        const entries = service.sortedEntries();
        for (const parts of PART_SETS) {
          const expected = JSON.stringify(entries.map((entry) => processView(service, entry, parts)));
          assert.equal(
            processListBytes(service, entries, parts).toString('utf8'),
            expected,
            `step ${step} ${[...parts].join(',')}`,
          );
          // Written into a reused buffer still holding an earlier, possibly longer answer.
          const pieces = processListPieces(service, entries, parts);
          assert.equal(pieces.length, Buffer.byteLength(expected));
          assert.equal(pieces.writeTo(reused).toString('utf8'), expected, `step ${step} reused buffer`);
        }
        compared++;
      }
    }
    assert.ok(compared > 0);
    assert.deepEqual([...done].sort(), [
      'create',
      'create reader',
      'delete',
      'metadata',
      'restart',
      'start',
      'stop',
      'update',
    ]);
  });
});
