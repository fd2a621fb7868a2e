import { stat } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { ApiError } from '../http/index.js';
import type { PreparedReload, ReloadStep } from '../lifecycle/index.js';
import { decodeFilePath, DiskFilesystem, markUserFile, sendStoredFile } from '../storage/index.js';
import { buildRouteTable, matchRoute, type DirectoryRoute, type RouteTable } from './route-table.js';
import { markUiFile } from './ui-headers.js';

/** The keys the router is built from; a reload builds it again when one of them changed. */
export const ROUTER_KEYS = ['router.blocked_prefixes', 'router.routes', 'router.ui_path'] as const;

/** A route table with its directories opened. */
interface ServedRoutes {
  table: RouteTable;
  directories: ReadonlyMap<DirectoryRoute, DiskFilesystem>;
}

/**
 * What `router` serves in the disk's place (a `DiskFallback` of the storage module): the UI build
 * at `/ui/`, directories under their prefixes, redirects. GET and HEAD only, like the disk mount;
 * a path under a directory's prefix that names no file is a 404, never a file of the disk.
 */
export class Router {
  private constructor(
    private served: ServedRoutes,
    private readonly logger: Logger,
  ) {}

  /** Builds the router of `config.router`; throws naming the key when a route or directory is bad. */
  static async create(config: Config, logger: Logger): Promise<Router> {
    return new Router(await openRoutes(config.router), logger);
  }

  /** Answers the request when a route claims its path, else resolves undefined. */
  readonly claim = async (
    request: FastifyRequest,
    reply: FastifyReply,
    urlPath: string,
  ): Promise<FastifyReply | undefined> => {
    const match = matchRoute(this.served.table, urlPath);
    if (match === undefined) return undefined;
    if (match.kind === 'redirect') {
      const query = request.url.indexOf('?');
      return reply.redirect(match.location + (query === -1 ? '' : request.url.slice(query)), 301);
    }
    const { route, rest } = match;
    const path = decodeFilePath(rest);
    const file = path === undefined ? undefined : await this.served.directories.get(route)?.open(path);
    if (file === undefined) {
      throw new ApiError('NOT_FOUND', route.prefix + rest, { message: 'File not found' });
    }
    if (route.ui) markUiFile(reply);
    else markUserFile(reply);
    return sendStoredFile(request, reply, file);
  };

  /** Builds the routes again on a reload that changed `router.*`; refused when they are bad. */
  readonly reloadStep: ReloadStep<Config> = {
    name: 'router',
    keys: ROUTER_KEYS,
    prepare: async (next): Promise<PreparedReload> => {
      const served = await openRoutes(next.router);
      return {
        commit: () => {
          this.served = served;
          this.logger.info({ routes: describe(served.table) }, 'router: routes rebuilt');
        },
        abort: () => undefined,
      };
    },
  };
}

async function openRoutes(router: Config['router']): Promise<ServedRoutes> {
  const { table, problems } = buildRouteTable(router);
  const directories = new Map<DirectoryRoute, DiskFilesystem>();
  for (const route of table.directories) {
    const problem = await directoryProblem(route.root);
    if (problem !== undefined) {
      problems.push(`${route.key}: "${route.root}" ${problem}`);
      continue;
    }
    const directory = new DiskFilesystem({
      root: route.root,
      maxSizeBytes: 0,
      usageCacheMs: 0,
      now: Date.now,
      onListenerError: () => undefined,
    });
    // Only remembers the real path: the directory exists (checked above), nothing is created.
    await directory.init();
    directories.set(route, directory);
  }
  if (problems.length > 0) throw new RouterConfigError(problems);
  return { table, directories };
}

async function directoryProblem(dir: string): Promise<string | undefined> {
  try {
    return (await stat(dir)).isDirectory() ? undefined : 'is not a directory';
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
}

function describe(table: RouteTable): string[] {
  return [
    ...table.directories.map((route) => `${route.prefix}/ -> ${route.root}`),
    ...[...table.redirects].map(([from, to]) => `${from} -> 301 ${to}`),
  ];
}

/** Bad routes or directories; `problems` each name the key. */
export class RouterConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'RouterConfigError';
  }
}
