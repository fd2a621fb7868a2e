import { isDeepStrictEqual } from 'node:util';
import type { FastifyRequest } from 'fastify';
import { readProcessConfig } from '../../src/process/config/process-config.js';
import type { ProcessConfig } from '../../src/process/config/index.js';
import { readProcessConfigByHand } from '../process/hand-written-config-reader.js';

/** Where a body's two readings differ: the body, and both readings. */
export interface ReaderDisagreement {
  body: unknown;
  schema: unknown;
  hand: unknown;
}

/**
 * Reads `body` with the contract's schema (the server's path) and with the hand-written reader it
 * replaced, and says how they differ: they must accept and refuse the same bodies, with the same
 * details in the same order, and make the same config (ids the body did not give are random, so
 * they compare as "generated").
 *
 * One difference of order is expected: the hand-written reader named a `limits` that is not an
 * object before every other field (it read that object first), the schema names it in its place,
 * last, as the document lists the fields. The details are the same; only that one moves.
 */
export function disagreementOf(body: unknown): ReaderDisagreement | undefined {
  const schema = readProcessConfig(body);
  const hand = readProcessConfigByHand(body);
  const bySchema = { problems: limitsInPlace(schema.problems), config: masked(schema.config, body) };
  const byHand = { problems: limitsInPlace(hand.problems), config: masked(hand.config, body) };
  return isDeepStrictEqual(bySchema, byHand) ? undefined : { body, schema: bySchema, hand: byHand };
}

const LIMITS_NOT_AN_OBJECT = 'limits: must be an object';

/** The details with a `limits` that is not an object named last (see above). */
function limitsInPlace(problems: string[]): string[] {
  if (!problems.includes(LIMITS_NOT_AN_OBJECT)) return problems;
  return [...problems.filter((problem) => problem !== LIMITS_NOT_AN_OBJECT), LIMITS_NOT_AN_OBJECT];
}

/**
 * Every process config body a test server receives (`POST /api/v3/process`, `PUT
 * /api/v3/process/:id`), read both ways; a test server's `close` fails on a disagreement.
 */
export class ConfigReaderDifferential {
  readonly disagreements: ReaderDisagreement[] = [];

  inspect(request: FastifyRequest): void {
    const route = `${request.method} ${request.routeOptions.url}`;
    if (route !== 'POST /api/v3/process' && route !== 'PUT /api/v3/process/:id') return;
    const disagreement = disagreementOf(request.body);
    if (disagreement !== undefined) this.disagreements.push(disagreement);
  }
}

const GENERATED = '(generated)';

/** `config` with the ids the body did not give replaced by a marker. */
function masked(config: ProcessConfig | undefined, body: unknown): unknown {
  if (config === undefined) return undefined;
  const given = isObject(body) ? body : {};
  const maskList = (list: ProcessConfig['input'], key: 'input' | 'output'): unknown[] => {
    const sent = Array.isArray(given[key]) ? (given[key] as unknown[]) : [];
    return list.map((io, index) => {
      const item = sent[index];
      return isObject(item) && item.id === io.id ? io : { ...io, id: GENERATED };
    });
  };
  return {
    ...config,
    id: given.id === config.id ? config.id : GENERATED,
    input: maskList(config.input, 'input'),
    output: maskList(config.output, 'output'),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
