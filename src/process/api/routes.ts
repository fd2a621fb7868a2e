import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { availableParallelism } from 'node:os';
import { acceptsGzip, addVary, ApiError } from '../../http/index.js';
import { compileGlob, type Glob } from '../../storage/index.js';
import { PROCESS_PARTS, type ProcessPart } from './api-shapes.js';
import { globSyntaxProblem } from './glob-syntax.js';
import { isObject } from '../config/index.js';
import { COMMANDS, type Command, type ProcessService } from '../service/index.js';
import { ListAnswers, type ListQuestion } from './list-answers.js';
import { configBytesOf, processBytes, reportBytesOf } from './process-json-fragments.js';
import { stateViewJson } from './views.js';

type IdParams = { Params: { id: string } };
type KeyParams = { Params: { id: string; key: string } };
type Query = Record<string, string | string[] | undefined>;

/**
 * From this size on the list (about 7 KB per process) is gzip-encoded in pieces at once
 * (parallel-gzip.ts), one per core: with a few hundred processes compressing it in one stream took
 * longer than building it.
 */
const PIECEWISE_GZIP_BYTES = 256 * 1024;
const GZIP_PIECES = Math.min(4, availableParallelism());
/**
 * zlib level for those lists: the default, whose answer is a third of level 3's (23 KB against
 * 60 KB for 200 processes) for about twice the CPU. A list that is polled is compressed ahead of
 * its requests (list-answers.ts), so the smaller answer, which a UI on a slow link receives every
 * second, costs no request its time; a list built on request pays the difference
 * (docs/performance.md#fifth-pass-the-list-answered-ahead-26-nov-2026-late).
 */
const LIST_GZIP_LEVEL = 6;

/** Longest glob accepted in `idpattern`/`refpattern`. */
const MAX_PATTERN_LENGTH = 1000;

/** The process routes of docs/processes.md#routes-and-answers, registered inside the guarded `/api/v3` scope. */
export function registerProcessRoutes(v3: FastifyInstance, service: ProcessService): void {
  v3.post('/process', async (request, reply) => sendJson(reply, await service.create(request.body)));

  const listAnswers = new ListAnswers(
    service,
    {
      minGzipBytes: PIECEWISE_GZIP_BYTES,
      gzipPieces: GZIP_PIECES,
      gzipLevel: LIST_GZIP_LEVEL,
    },
    (error) => v3.log.error({ err: error }, 'answering the process list ahead failed'),
  );
  v3.addHook('onClose', (_instance, done) => {
    listAnswers.close();
    done();
  });
  v3.get('/process', async (request, reply) => {
    const answer = await listAnswers.answer(readListQuestion(request.query as Query), wantsGzip(request));
    if (answer.gzipped) {
      // What @fastify/compress would send, in less time; it leaves an encoded answer alone.
      addVary(reply, 'accept-encoding');
      void reply.header('content-encoding', 'gzip');
    }
    return sendBytes(reply, answer.bytes);
  });

  v3.get<IdParams>('/process/:id', async (request, reply) => {
    const entry = service.entry(request.params.id);
    return sendBytes(reply, processBytes(service, entry, readFilter(request.query as Query)));
  });

  v3.get<IdParams>('/process/:id/config', async (request, reply) =>
    sendBytes(reply, configBytesOf(service.entry(request.params.id))),
  );

  v3.get<IdParams>('/process/:id/state', async (request, reply) =>
    sendBytes(reply, Buffer.from(stateViewJson(service, service.entry(request.params.id)))),
  );

  v3.get<IdParams>('/process/:id/report', async (request, reply) =>
    sendBytes(reply, reportBytesOf(service.entry(request.params.id))),
  );

  v3.put<IdParams>('/process/:id', async (request, reply) =>
    sendJson(reply, await service.update(request.params.id, request.body)),
  );

  v3.delete<IdParams>('/process/:id', async (request, reply) => {
    await service.remove(request.params.id);
    return sendJson(reply, 'OK');
  });

  v3.put<IdParams>('/process/:id/command', async (request, reply) => {
    service.entry(request.params.id);
    await service.runCommand(request.params.id, readCommand(request));
    return sendJson(reply, 'OK');
  });

  v3.get<IdParams>('/process/:id/metadata', async (request, reply) =>
    sendJson(reply, service.metadata(request.params.id)),
  );

  v3.get<KeyParams>('/process/:id/metadata/:key', async (request, reply) => {
    const metadata = service.metadata(request.params.id);
    const key = request.params.key;
    if (!Object.hasOwn(metadata, key)) {
      throw new ApiError('NOT_FOUND', `process "${request.params.id}" has no metadata "${key}"`, {
        message: 'Unknown key',
      });
    }
    return sendJson(reply, metadata[key]);
  });

  v3.put<KeyParams>('/process/:id/metadata/:key', async (request, reply) => {
    service.entry(request.params.id);
    if (request.body === undefined) {
      throw new ApiError('BAD_REQUEST', 'body: a JSON value is required (null deletes the key)');
    }
    return sendJson(reply, await service.setMetadata(request.params.id, request.params.key, request.body));
  });
}

/** Sends any JSON value, strings and `null` included, as `application/json`. */
function sendJson(reply: FastifyReply, value: unknown): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(JSON.stringify(value));
}

/** Sends JSON that is already encoded (see process-json-fragments.ts). */
function sendBytes(reply: FastifyReply, bytes: Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(bytes);
}

/** Would @fastify/compress gzip this request's answer (given its size)? */
function wantsGzip(request: FastifyRequest): boolean {
  return request.headers['x-no-compression'] === undefined && acceptsGzip(request.headers['accept-encoding']);
}

function readCommand(request: FastifyRequest): Command {
  const body = request.body;
  const command = isObject(body) ? body.command : undefined;
  if (typeof command !== 'string' || !(COMMANDS as readonly string[]).includes(command)) {
    throw new ApiError('BAD_REQUEST', `command: known commands are ${COMMANDS.join(', ')}`, {
      message: 'Unknown command provided',
    });
  }
  return command as Command;
}

/** The list's query: `filter`, `id`, `reference`, `idpattern`, `refpattern` (docs/processes.md#routes-and-answers). */
function readListQuestion(query: Query): ListQuestion {
  const parts = readFilter(query);
  const wanted = readList(query, 'id');
  const reference = readOne(query, 'reference');
  const idPattern = readGlob(query, 'idpattern');
  const refPattern = readGlob(query, 'refpattern');
  return {
    key: JSON.stringify([
      [...parts].sort(),
      wanted ?? null,
      reference ?? null,
      readOne(query, 'idpattern') ?? null,
      readOne(query, 'refpattern') ?? null,
    ]),
    parts,
    includes: (entry) =>
      (wanted === undefined || wanted.includes(entry.config.id)) &&
      (reference === undefined || entry.config.reference === reference) &&
      (idPattern === undefined || idPattern.matches(entry.config.id)) &&
      (refPattern === undefined || refPattern.matches(entry.config.reference)),
  };
}

/** `filter=config,state`: the parts to include; all of them when absent or empty. */
function readFilter(query: Query): Set<ProcessPart> {
  const list = readList(query, 'filter');
  const known = (list ?? []).filter((part): part is ProcessPart =>
    (PROCESS_PARTS as readonly string[]).includes(part),
  );
  return new Set(known.length === 0 && (list === undefined || list.length === 0) ? PROCESS_PARTS : known);
}

/** A comma-separated (or repeated) query parameter; `undefined` when absent or empty. */
function readList(query: Query, name: string): string[] | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  const items = (Array.isArray(raw) ? raw : [raw])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
  return items.length === 0 ? undefined : items;
}

function readOne(query: Query, name: string): string | undefined {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value;
}

function readGlob(query: Query, name: string): Glob | undefined {
  const pattern = readOne(query, name);
  if (pattern === undefined) return undefined;
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new ApiError('BAD_REQUEST', `${name}: longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  const problem = globSyntaxProblem(pattern);
  if (problem !== undefined) throw new ApiError('BAD_REQUEST', `${name}: invalid pattern (${problem})`);
  try {
    return compileGlob(pattern);
  } catch (error) {
    throw new ApiError('BAD_REQUEST', `${name}: invalid pattern (${(error as Error).message})`);
  }
}
