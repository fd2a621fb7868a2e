import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { PROCESS_PARTS, type ProcessPart } from '../../src/process/api/api-shapes.js';
import { ListAnswers, type Schedule } from '../../src/process/api/list-answers.js';
import {
  configBytesOf,
  processBytes,
  processListBytes,
  processListPieces,
  reportBytesOf,
} from '../../src/process/api/process-json-fragments.js';
import { ProcessReport, ProcessState, ProcessView } from '../../src/process/api/contract.js';
import { publishedStateBytes } from '../../src/process/api/published-state.js';
import { ProcessConfig } from '../../src/process/config/index.js';
import { processView, reportView, stateViewJson } from '../../src/process/api/views.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, lavfiProcess, ok, waitFor } from './support.js';

/**
 * `wanted`, or a second after `previous` when `wanted` is less than a second after it: the list's
 * states kept at `previous` are then past their age (published-state.ts; so is a time before
 * them), and the clock stays near the real one, which stamps ffmpeg's reports (rates over a
 * window far ahead of them would all read 0).
 */
function inAnotherSecond(previous: number, wanted: number): number {
  return wanted >= previous && wanted - previous < 1000 ? previous + 1000 : wanted;
}

/**
 * Timers run by hand on a clock read with `now` and set with `setNow`: `passMs` moves the clock
 * forward, stopping at each call that falls due to make it, in order of its time.
 */
function manualTimers(
  now: () => number,
  setNow: (ms: number) => void,
): { schedule: Schedule; passMs: (ms: number) => void; pending: () => number } {
  const due = new Set<{ atMs: number; fire: () => void }>();
  return {
    schedule: (fire, delayMs) => {
      const call = { atMs: now() + delayMs, fire };
      due.add(call);
      return () => due.delete(call);
    },
    passMs: (ms) => {
      const until = now() + ms;
      for (;;) {
        let next: { atMs: number; fire: () => void } | undefined;
        for (const call of due)
          if (call.atMs <= until && (next === undefined || call.atMs < next.atMs)) next = call;
        if (next === undefined) break;
        due.delete(next);
        setNow(Math.max(now(), next.atMs));
        next.fire();
      }
      setNow(until);
    },
    pending: () => due.size,
  };
}

/** Every subset of the parts a client can ask for (`filter`), the empty one included. */
const PART_SETS: ReadonlySet<ProcessPart>[] = Array.from(
  { length: 1 << PROCESS_PARTS.length },
  (_, mask) => new Set(PROCESS_PARTS.filter((_, bit) => (mask & (1 << bit)) !== 0)),
);

/** The contract's answer schemas, with the shared ones the views refer to by `$ref`. */
const CONTRACT = { ProcessConfig, ProcessState, ProcessReport };
const validatorOf = (schema: TSchema) => Compile(CONTRACT, schema);
const ANSWERS = {
  list: validatorOf(Type.Array(ProcessView)),
  process: validatorOf(ProcessView),
  config: validatorOf(ProcessConfig),
  state: validatorOf(ProcessState),
  report: validatorOf(ProcessReport),
};

/** Asserts that encoded `bytes` are an answer of the contract's `kind`. */
function assertContractAnswer(kind: keyof typeof ANSWERS, bytes: Buffer | string, what: string): void {
  const value = JSON.parse(bytes.toString()) as unknown;
  assert.deepEqual(ANSWERS[kind].Errors(value).slice(0, 3), [], `${kind} ${what}`);
}

// The process routes answer from cached per-process fragments (process-json-fragments.ts); these must be the
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
      clock = inAnotherSecond(clock, Date.now());
      const entries = service.sortedEntries();
      for (const parts of PART_SETS) {
        const expected = JSON.stringify(entries.map((entry) => processView(service, entry, parts)));
        const list = processListBytes(service, entries, parts);
        assert.equal(list.toString('utf8'), expected, [...parts].join(','));
        assertContractAnswer('list', list, [...parts].join(','));
        for (const entry of entries) {
          const bytes = processBytes(service, entry, parts);
          const what = `${entry.config.id} ${[...parts].join(',')}`;
          assert.equal(bytes.toString('utf8'), JSON.stringify(processView(service, entry, parts)), what);
          assertContractAnswer('process', bytes, what);
        }
      }
      for (const entry of entries) {
        assert.equal(configBytesOf(entry).toString('utf8'), JSON.stringify(entry.config));
        assert.equal(reportBytesOf(entry).toString('utf8'), JSON.stringify(reportView(entry)));
        assertContractAnswer('config', configBytesOf(entry), entry.config.id);
        assertContractAnswer('report', reportBytesOf(entry), entry.config.id);
        assertContractAnswer('state', stateViewJson(service, entry), entry.config.id);
        assertContractAnswer('state', publishedStateBytes(service, entry), entry.config.id);
        compared++;
      }
    };

    // Compared again after each report of ffmpeg's (about one a second): progress, rates, usage moved.
    let lastFrame = -1;
    const ffmpegReportedAnew = async (): Promise<void> => {
      lastFrame = await waitFor(
        async () => {
          const { frame } = (
            await ok<{ progress: { frame: number } }>(server, 'GET', '/process/running/state')
          ).progress;
          return frame !== lastFrame ? frame : undefined;
        },
        15_000,
        'a new progress report of ffmpeg',
      );
    };
    for (let round = 0; round < 4; round++) {
      compareAll();
      await ffmpegReportedAnew();
    }
    // Changes that must show at once: a restart (history), an update (new config), metadata.
    await ok(server, 'PUT', '/process/running/command', { command: 'restart' });
    compareAll();
    await ok(server, 'PUT', '/process/running', { ...running, options: ['-loglevel', 'info', '-nostats'] });
    compareAll();
    await ok(server, 'PUT', '/process/idle/metadata/note', 'changed');
    compareAll();
    for (let round = 0; round < 4; round++) {
      compareAll();
      await ffmpegReportedAnew();
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

  it("send the list's states up to a second old, and a client's command at once", async () => {
    await ok(server, 'POST', '/process', { ...lavfiProcess('published'), autostart: true });
    type Listed = { id: string; state: { order: string; exec: string; progress: { frame: number } } };
    const listed = async (): Promise<{ text: string; state: Listed['state'] }> => {
      const answer = await call<Listed[]>(server, 'GET', '/process?filter=state&id=published');
      assert.equal(answer.status, 200, answer.text);
      const state = answer.body[0]?.state;
      assert.ok(state !== undefined);
      return { text: answer.text, state };
    };
    clock = inAnotherSecond(clock, Date.now());
    await waitFor(async () => (await listed()).state.progress.frame > 0, 15_000, 'progress in the list');
    // While the clock stands, the list sends the state it encoded first, while ffmpeg goes on.
    clock = inAnotherSecond(clock, Date.now());
    const first = await listed();
    await waitFor(
      async () =>
        (await ok<{ progress: { frame: number } }>(server, 'GET', '/process/published/state')).progress
          .frame > first.state.progress.frame,
      15_000,
      'the exact state to move on',
    );
    assert.equal((await listed()).text, first.text);
    // A command shows at once, the clock still standing.
    await ok(server, 'PUT', '/process/published/command', { command: 'stop' });
    const stopped = await listed();
    assert.equal(stopped.state.order, 'stop');
    await waitFor(async () => (await listed()).state.exec === 'finished', 15_000, 'the stop in the list');
    // A second later the list's state is the exact one again.
    clock = inAnotherSecond(clock, Date.now());
    const exact = await ok<Listed['state']>(server, 'GET', '/process/published/state');
    assert.deepEqual((await listed()).state, exact);
    await ok(server, 'DELETE', '/process/published');
  });

  it('answer a polled list ahead, not one asked once, and stop when the polling stops', async () => {
    const service = server.app.processes;
    const failures: unknown[] = [];
    // The answers' rounds run on timers moved by hand with the clock the service and they share.
    const timers = manualTimers(
      () => clock,
      (ms) => (clock = ms),
    );
    const answers = new ListAnswers(
      service,
      { minGzipBytes: 0, gzipPieces: 2, gzipLevel: 6 },
      (error) => failures.push(error),
      () => clock,
      timers.schedule,
    );
    const all = { key: 'all', parts: new Set(PROCESS_PARTS), includes: () => true };
    const once = { key: 'once', parts: new Set<ProcessPart>(['state']), includes: () => true };
    clock = inAnotherSecond(clock, Date.now());
    try {
      await answers.answer(once, true);
      timers.passMs(1300);
      assert.equal(answers.answeredAhead, 0, 'a question asked once is not answered ahead');
      assert.equal(timers.pending(), 0, 'nor is a round scheduled for it');
      await answers.answer(all, true);
      await answers.answer(all, true);
      timers.passMs(1300);
      assert.ok(answers.answeredAhead >= 1, 'a polled question is answered ahead');
      // What was answered ahead (its states renewed within the last second) is what the list is now.
      const expected = processListBytes(service, service.sortedEntries(), all.parts).toString('utf8');
      assert.equal(gunzipSync((await answers.answer(all, true)).bytes).toString('utf8'), expected);
      // No longer polled: after WARM_MS (2.5 s) it is no longer answered ahead, and no round is left.
      timers.passMs(3000);
      const stopped = answers.answeredAhead;
      timers.passMs(10_000);
      assert.equal(answers.answeredAhead, stopped);
      assert.equal(timers.pending(), 0, 'no round scheduled once nothing is polled');
      assert.deepEqual(failures, []);
    } finally {
      answers.close();
    }
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
    // Every list answered through the kept answers, gzip-encoded whatever its size.
    const failures: unknown[] = [];
    const answers = new ListAnswers(service, { minGzipBytes: 0, gzipPieces: 2, gzipLevel: 3 }, (error) =>
      failures.push(error),
    );
    let answersReused = 0;
    let answersAsked = 0;
    // What each process's published state was last time, to check when it may be reused.
    const lastPublished = new Map<unknown, { bytes: Buffer; atMs: number; facts: string }>();
    const facts = (entry: ReturnType<typeof service.entry>): string =>
      JSON.stringify([
        entry.supervisor.order,
        entry.supervisor.state,
        entry.supervisor.pid ?? null,
        entry.report.lastLogLine,
        service.commandLine(entry),
      ]);
    let statesReused = 0;
    let statesChanged = 0;
    // States the earlier tests left published belong to their clock: start a second after it.
    clock = inAnotherSecond(clock, Date.now());
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
      // The clock as for the last lists: a state is kept only while its facts stay, and one
      // encoded anew (here, or by a list answered ahead after a change, even one undone since, as
      // a failing run that restarts and fails alike) carries the facts of now.
      for (const entry of service.sortedEntries()) {
        const bytes = publishedStateBytes(service, entry);
        const before = lastPublished.get(entry);
        const id = entry.config.id;
        if (before === undefined) continue;
        assert.equal(before.atMs, clock);
        if (bytes === before.bytes) {
          assert.equal(before.facts, facts(entry), `step ${step}: ${id}'s state kept after a change`);
          statesReused++;
        } else {
          const state = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
          const exact = JSON.parse(stateViewJson(service, entry)) as Record<string, unknown>;
          for (const key of ['order', 'exec', 'pid', 'last_logline', 'command'])
            assert.deepEqual(state[key], exact[key], `step ${step}: ${id}'s ${key}`);
          statesChanged++;
        }
      }
      clock = inAnotherSecond(clock, Date.now() + Math.floor(random() * 3) * 1000);
      {
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
        // A random question through the kept answers: the same bytes as the list built now.
        const parts = PART_SETS[Math.floor(random() * PART_SETS.length)] as ReadonlySet<ProcessPart>;
        const only = random() < 0.3 ? ids[Math.floor(random() * ids.length)] : undefined;
        const gzip = random() < 0.5;
        const question = {
          key: JSON.stringify([[...parts].sort(), only ?? null]),
          parts,
          includes: (entry: { config: { id: string } }) => only === undefined || entry.config.id === only,
        };
        // The list as built at the moment the answer is asked for (`answer` takes its pieces before
        // its first await); twice, the second time after the first's gzip, as processes moved on.
        const listNow = (): string =>
          processListBytes(service, service.sortedEntries().filter(question.includes), parts).toString(
            'utf8',
          );
        const expectedFirst = listNow();
        const first = await answers.answer(question, gzip);
        const expectedSecond = listNow();
        const second = await answers.answer(question, gzip);
        for (const [answer, expected] of [
          [first, expectedFirst],
          [second, expectedSecond],
        ] as const) {
          assert.equal(answer.gzipped, gzip);
          const text = (answer.gzipped ? gunzipSync(answer.bytes) : answer.bytes).toString('utf8');
          assert.equal(text, expected, `step ${step} kept answer ${[...parts].join(',')} ${only ?? 'all'}`);
        }
        answersAsked++;
        if (gzip && first.bytes === second.bytes) answersReused++;
        compared++;
      }
      // What the lists above sent, for the check after the next change (the clock stays meanwhile).
      for (const entry of service.sortedEntries()) {
        const bytes = publishedStateBytes(service, entry);
        lastPublished.set(entry, { bytes, atMs: clock, facts: facts(entry) });
      }
    }
    answers.close();
    assert.deepEqual(failures, []);
    assert.ok(compared > 0);
    assert.ok(statesReused > 0 && statesChanged > 0, `${statesReused} states kept, ${statesChanged} changed`);
    assert.ok(
      answersReused > 0 && answersReused < answersAsked,
      `${answersReused} of ${answersAsked} reused`,
    );
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
