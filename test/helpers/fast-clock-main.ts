/**
 * The server as `src/main.ts` starts it, but on a clock that runs `STREAMCORE_TEST_CLOCK_SPEED`
 * times faster than real time from `STREAMCORE_TEST_CLOCK_START_MS` (Unix ms): a child process for
 * the history's crash tests, where an hour of collection has to pass in seconds. Test use only.
 */
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';

const startMs = Number(process.env.STREAMCORE_TEST_CLOCK_START_MS);
const speed = Number(process.env.STREAMCORE_TEST_CLOCK_SPEED ?? 1);
const realStart = Date.now();
const now = (): number => startMs + (Date.now() - realStart) * speed;

const logger = pino({ level: process.env.CORE_LOG_LEVEL ?? 'info' });
const { config } = await loadConfig();
const app = await buildApp(config, { logger, now });
const url = await app.listen();
logger.info({ url }, 'streamcore listening');
