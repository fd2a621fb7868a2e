import type { Logger } from 'pino';
import type { SpawnFn } from '../process/index.js';
import type { Skills } from './contract.js';
import {
  parseCodecs,
  parseDevices,
  parseFilters,
  parseFormats,
  parseHwaccels,
  parseProtocols,
  parseVersion,
} from './parse-skills.js';
import { runListing, type ListingOutput } from './run-listing.js';

export interface SkillsDeps {
  binary: string;
  spawn: SpawnFn;
  logger: Logger;
  /** Bound on each listing run, ms. */
  timeoutMs?: number;
}

/**
 * Learns the skills by running the binary (once at start and on each reload, never per request).
 * Loads are single-flight: a reload asked while one runs gets that one's result.
 */
export class SkillsService {
  private current: Skills = emptySkills();
  private loading: Promise<Skills> | undefined;
  private first: Promise<Skills> | undefined;

  constructor(private readonly deps: SkillsDeps) {}

  /**
   * The load at start (app.ts calls it once the listener is open, so that the binary's runs do not
   * delay the first answer). Runs once; later calls get the same load.
   */
  start(): Promise<Skills> {
    this.first ??= this.reload();
    return this.first;
  }

  /** The skills of the last finished load (empty lists and version `0.0.0` before the first). */
  get(): Skills {
    return this.current;
  }

  /** Runs the binary again; resolves with what it found. Never rejects. */
  reload(): Promise<Skills> {
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /**
   * The load in progress, if any, else the current skills: what a request should answer. A request
   * that comes before the load at start has begun begins it (and waits for it).
   */
  async settled(): Promise<Skills> {
    return this.loading ?? (this.first === undefined ? this.start() : this.current);
  }

  private async load(): Promise<Skills> {
    const { binary, spawn, logger } = this.deps;
    const timeoutMs = this.deps.timeoutMs ?? 10_000;
    const options = ['version', 'codecs', 'filters', 'formats', 'devices', 'protocols', 'hwaccels'];
    // One after the other: a load is rare, and the host's cores belong to the encoders.
    const outputs: ListingOutput[] = [];
    for (const option of options) outputs.push(await runListing(spawn, binary, option, timeoutMs));
    const text = (index: number): string => outputs[index]?.stdout ?? '';
    const failures = outputs.flatMap((output) => (output.failure === undefined ? [] : [output.failure]));
    const version = outputs[0]?.failure === undefined ? parseVersion(text(0)) : emptySkills().ffmpeg;
    if (failures.length > 0) logger.warn({ binary, failures }, 'ffmpeg skills: some listings failed');
    this.current = {
      // In the schema's order (skills/contract.ts), the order of the reference's answer.
      ffmpeg: version,
      filter: parseFilters(text(2)),
      hwaccels: parseHwaccels(text(6)),
      codecs: parseCodecs(text(1)),
      devices: parseDevices(text(4)),
      formats: parseFormats(text(3)),
      protocols: parseProtocols(text(5)),
    };
    logger.info(
      {
        binary,
        version: version.version,
        codecs: this.current.codecs.video.length + this.current.codecs.audio.length,
      },
      'ffmpeg skills loaded',
    );
    return this.current;
  }
}

/** What a missing or broken binary can do: nothing, in the reference's shape. */
export function emptySkills(): Skills {
  return {
    ffmpeg: { version: '0.0.0', compiler: '', configuration: '', libraries: [] },
    filter: [],
    hwaccels: [],
    codecs: { audio: [], video: [], subtitle: [] },
    devices: { demuxers: [], muxers: [] },
    formats: { demuxers: [], muxers: [] },
    protocols: { input: [], output: [] },
  };
}
