/**
 * process/service: the façade the API and collectors talk to. Orchestrates config, store and
 * supervision: create/update/delete/command, locks per id, memfs cleanup and input reads.
 */
export type { PreparedProbe } from './entry-factory.js';
export type { ProcessEntry } from './process-entry.js';
export { COMMANDS, ProcessService } from './service.js';
export type { Command, ProcessServiceDeps } from './service.js';
export { createEncoderSpawn, sandboxPlaces, type EncoderSpawn } from './encoder-spawn.js';
