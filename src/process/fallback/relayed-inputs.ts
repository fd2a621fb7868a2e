import type { Logger } from 'pino';
import type { ProcessConfig, ProcessInput } from '../config/index.js';
import type { ProcessReport, RunPipe, SpawnFn } from '../supervise/index.js';
import { InputRelay } from './input-relay.js';
import type { LiveInputs } from './live-inputs.js';
import type { LocalStreams } from './local-stream.js';

export interface RelayedInputsDeps {
  binary: string;
  cwd: string;
  spawn: SpawnFn;
  logger: Logger;
  /** Wall clock, Unix milliseconds (log line times). */
  now: () => number;
  /** Monotonic milliseconds (the switch's timeouts). */
  monotonic: () => number;
  mask: (text: string) => string;
  /** The server's own streams, read without a feeder; none when undefined. */
  localStreams?: LocalStreams;
}

/** The first file descriptor of the encoder that reads a relay (0–3 are stdin, stdout, stderr, progress). */
const FIRST_RELAY_FD = 4;

/** What one run gets: its config with relayed inputs read from pipes, the pipes, and how to end the relays. */
export interface RelayedRun {
  config: ProcessConfig;
  pipes: RunPipe[];
  stop: () => void;
}

/**
 * Puts a relay in front of every input with a fallback (docs/processes.md#fallback-sources): the
 * encoder reads that input as FLV from `pipe:<fd>`, and the input's own options go to the feeder
 * that reads its address. Switches are logged in the process's log and the server's, and
 * recorded in `live`.
 */
export class RelayedInputs {
  constructor(private readonly deps: RelayedInputsDeps) {}

  relay(resolved: ProcessConfig, live: LiveInputs, report: ProcessReport): RelayedRun {
    if (!resolved.input.some((input) => input.fallback !== undefined))
      return { config: resolved, pipes: [], stop: () => undefined };
    const relays: InputRelay[] = [];
    const pipes: RunPipe[] = [];
    const inputs = resolved.input.map((input): ProcessInput => {
      const fallback = input.fallback;
      if (fallback === undefined) return input;
      const relay = this.inputRelay(resolved.id, input, live, report);
      const fd = FIRST_RELAY_FD + pipes.length;
      relays.push(relay);
      pipes.push({ fd, attach: (stream) => relay.attach(stream) });
      return { id: input.id, address: `pipe:${fd}`, options: ['-f', 'flv'], cleanup: input.cleanup };
    });
    return {
      config: { ...resolved, input: inputs },
      pipes,
      stop: () => {
        for (const relay of relays) relay.stop();
        live.reset();
      },
    };
  }

  private inputRelay(
    processId: string,
    input: ProcessInput,
    live: LiveInputs,
    report: ProcessReport,
  ): InputRelay {
    const deps = this.deps;
    const fallback = input.fallback as NonNullable<ProcessInput['fallback']>;
    const note = (line: string): void => report.addLine(Math.floor(deps.now() / 1000), deps.mask(line));
    return new InputRelay({
      inputId: input.id,
      primary: { address: input.address, options: input.options },
      // Options say how a feeder reads the address: an input with options keeps its feeder.
      localPrimary: input.options.length === 0 ? deps.localStreams?.(input.address) : undefined,
      fallback: { address: fallback.address, options: fallback.options },
      settings: {
        timeoutMs: fallback.timeout_seconds * 1000,
        returnAfterMs: fallback.return_after_seconds * 1000,
        switchBackIntervalMs: fallback.switch_back_interval_seconds * 1000,
      },
      binary: deps.binary,
      cwd: deps.cwd,
      spawn: deps.spawn,
      now: deps.monotonic,
      onSwitch: (to, reason) => {
        live.set(input.id, to);
        note(`streamcore: input "${input.id}": ${to} live (${reason})`);
        deps.logger.info(
          { component: 'process', id: processId, input: input.id, live: to, reason },
          `input switched to ${to}`,
        );
      },
      onFeederEnd: (source, reason) =>
        note(`streamcore: input "${input.id}": ${source} feeder ended: ${reason}`),
    });
  }
}
