import { spawn } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { createApiWorkers, type WorkerEntry, type WorkerPool } from './api-workers/index.js';
import { createAuth } from './auth/index.js';
import { Cluster } from './cluster/index.js';
import { DEFAULT_DASHBOARD_DIR, loadDashboardAssets, registerDashboardRoutes } from './dashboard/index.js';
import { configSecrets, resolveBindAddress, type Config } from './config/index.js';
import { applyLive, ConfigStore, registerConfigRoutes, type ConfigSource } from './config-api/index.js';
import { API_CONTRACTS } from './api-contracts.js';
import { createEvents, logLineEvent, type EventBus, type Timers } from './events/index.js';
import { createHttpServer, HttpAddress, loopbackBaseUrl, type ApiDescription } from './http/index.js';
import { Lifecycle, readAtUse } from './lifecycle/index.js';
import { LogBuffer, logLevelReloadStep, registerLogRoutes } from './log/index.js';
import { registerMetadataRoutes, SystemMetadata } from './metadata/index.js';
import { registerProbeRoutes } from './probe/index.js';
import { Router } from './router/index.js';
import { assertWritableDir } from './persistence/writable-dir.js';
import { removeStaleDirectories, removeStaleTemporaries } from './persistence/leftovers.js';
import { type Collector, Monitor, registerMetricsApi, registerPrometheusEndpoint } from './monitor/index.js';
import { createHostCollectors } from './monitor/collectors/index.js';
import { createIngest, type Ingest } from './ingest/index.js';
import { compileGlob, createStorage } from './storage/index.js';
import { createSessions, type SessionCollector } from './session/index.js';
import { registerSkillsRoutes, SkillsService } from './skills/index.js';
import { registerWidgetRoutes } from './widget/index.js';
import { TlsService, type TlsDeps } from './tls/index.js';
import {
  compileAccessRules,
  directionRefusal,
  createFfmpegCollector,
  createRestreamCollector,
  createEncoderSpawn,
  EncoderConnections,
  EncoderRegistry,
  ProcessService,
  registerEncoderGuard,
  registerProcessRoutes,
  type Schedule,
  type SpawnFn,
} from './process/index.js';

/** What the app takes from outside, so tests can run several apps in one process (STYLE §4). */
export interface AppDeps {
  logger: Logger;
  /** Wall clock in milliseconds; tests may shift it. */
  now?: () => number;
  /** The process supervision's timers, on the clock of `now` (default the real ones); tests move it. */
  schedule?: Schedule;
  /** Root of the proc filesystem the host collectors read; fixtures in tests. */
  procRoot?: string;
  /** Where the cgroups the host collectors read are mounted (default `/sys/fs/cgroup`); fixtures in tests. */
  cgroupRoot?: string;
  fetch?: typeof fetch;
  /** Starts encoder processes (default `child_process.spawn`). */
  spawn?: SpawnFn;
  /** The built dashboard's files (default `dist/web/dashboard`, written by `npm run build`). */
  dashboardDir?: string;
  /** Sees every answer before compression (the tests check answers against the API description). */
  inspectAnswer?: onSendHookHandler;
  /**
   * The recent lines `logger` wrote (see `createServerLogger`), which `GET /api/v3/log` answers.
   * Without one the route answers an empty list: the logger feeds no buffer then.
   */
  logBuffer?: LogBuffer;
  /** The config file the server was loaded from: encoders must never read it (its secrets). */
  configFile?: string;
  /**
   * Where `config` was loaded from (file, its content, env), for `/api/v3/config`. Without it the
   * config routes are not registered (tools and benchmarks that build a config in memory).
   */
  configSource?: ConfigSource & { fileJson: Record<string, unknown>; overrides: string[] };
  /** How HTTPS watches own certificate files and decides on HSTS (tests shorten and replace them). */
  tls?: Pick<TlsDeps, 'certificatePollMs' | 'publicRoots'>;
  /** The webhooks' timers (attempt time-outs, back-off); tests run them faster. */
  eventTimers?: Timers;
  /**
   * How API worker processes are started (the server's own entry: start.ts passes it). Without it
   * the server answers on one process whatever `api.workers` says (tools, benchmarks, most tests).
   */
  apiWorkerEntry?: WorkerEntry;
}

export interface App {
  readonly server: FastifyInstance;
  readonly config: Config;
  /** The metrics store, scheduler and exposition (for tools and benchmarks; routes use it already). */
  readonly monitor: Monitor;
  /** The live ingest servers (RTMP, SRT), for tools, tests and benchmarks. */
  readonly ingest: Ingest;
  /** The supervised processes (for tools and tests; the process routes use it already). */
  readonly processes: ProcessService;
  /** The event bus every module publishes into (for tools, tests and benchmarks). */
  readonly events: EventBus;
  /** The API description built from the routes (OpenAPI 3.1 at /api/v3/openapi.json). */
  readonly description: ApiDescription;
  /** HTTPS and the certificate it shares with RTMPS (its URL, its status, a forced renewal). */
  readonly tls: TlsService;
  /** The API worker processes, when `api.workers` and `AppDeps.apiWorkerEntry` ask for them. */
  readonly apiWorkers: WorkerPool | undefined;
  /** Listens on `config.address`, runs the start steps, and returns the base URL (`http://host:port`). */
  listen(): Promise<string>;
  /** Graceful shutdown: stop encoders, close HTTP, flush state. Safe to call more than once. */
  close(): Promise<void>;
}

/**
 * Wires the modules into one server. Nothing here does work of its own. One long function on
 * purpose (the file is past 300 lines because of it): the order of its statements is the start
 * order (docs/architecture.md), which a split into helpers would hide.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  const lifecycle = new Lifecycle<Config>();
  // Asked first, answered by the time the processes need it: setpriv and bwrap (each encoder
  // confined where the machine allows it, ffmpeg.sandbox) are probed while the server is built.
  const spawnForEncoders =
    deps.spawn === undefined
      ? createEncoderSpawn({ config, configFile: deps.configFile, logger: deps.logger, spawn }).then(
          (made) => made.spawn,
        )
      : Promise.resolve(deps.spawn);
  // A refusal (ffmpeg.sandbox "on" without bubblewrap) is thrown where it is awaited, below.
  spawnForEncoders.catch(() => undefined);
  const { server, description, corsReload, localOnly } = await createHttpServer(config, deps.logger, {
    contracts: API_CONTRACTS,
    inspectAnswer: deps.inspectAnswer,
  });
  lifecycle.onReload(corsReload);
  // Before the routes: the ACME challenge route and the HSTS hook concern every answer. Its reload
  // step before the ingest's: RTMPS listeners a reload opens serve the certificate it built.
  const tls = new TlsService({ logger: deps.logger, now: deps.now ?? Date.now, ...deps.tls });
  tls.register(server);
  lifecycle.onReload(tls.reloadStep(config, server.server));
  const encoders = new EncoderRegistry({
    dir: join(config.db.dir, 'encoders'),
    procRoot: deps.procRoot ?? '/proc',
    logger: deps.logger,
    kill: (pid, signal) => process.kill(pid, signal),
  });
  // Before every route: a connection an encoder opened reaches /memfs/ and nothing else here, even
  // through a redirect or a host name the address check could not know (issue 24 item 3).
  const encoderConnections = new EncoderConnections({
    procRoot: deps.procRoot ?? '/proc',
    encoderPids: () => encoders.runningPids(),
  });
  registerEncoderGuard(server, {
    // S3 mounts take encoder writes as memfs does (each run with its own credential).
    openPrefixes: ['/memfs/', ...config.storage.s3.map((s3) => `${s3.mountpoint.replace(/\/+$/, '')}/`)],
    fromEncoder: (socket) => encoderConnections.fromEncoder(socket),
  });
  // Every module's collectors; the monitor (wired last) collects them all.
  const collectors: Collector[] = [];
  const now = deps.now ?? Date.now;
  const startedAtMs = now();
  // Created first so the /api/v3 scope can register its routes; it reads `collectors` when it starts.
  const monitor = new Monitor(config, { logger: deps.logger, now, collectors });

  // --- events: the bus every module publishes into, its streams and webhooks ---
  // First, so that its shutdown step runs last: streams see the processes stop.
  // Webhooks are held to the encoders' output rules: the server sends nothing where they may not write.
  const outputRules = compileAccessRules(config.ffmpeg.access);
  const events = createEvents(config, {
    logger: deps.logger,
    now,
    lifecycle,
    timers: deps.eventTimers,
    refuseUrl: (url) => directionRefusal([url], 'output', outputRules),
  });

  // --- storage: filesystems and their HTTP mounts ---
  // Before anything can change: a change that cannot be saved must not be taken (issue 10 item 3).
  await assertWritableDir('db.dir', config.db.dir);
  await assertWritableDir('storage.disk.dir', config.storage.disk.dir);
  await removeLeftovers(config.db.dir, deps.logger);
  const storage = await createStorage(config, {
    logger: deps.logger,
    now: deps.now ?? Date.now,
    events: events.bus,
  });
  // `storage.filesystems.disk` / `.mem` (Filesystem contract) for processes.
  await storage.registerMounts(server);
  lifecycle.onShutdown(() => storage.close());
  collectors.push(storage.collector);
  // The filesystems and the memfs login read these from the running config at each write.
  lifecycle.onReload(
    readAtUse('storage', [
      'storage.disk.max_size_mbytes',
      'storage.memory.max_size_mbytes',
      'storage.memory.purge',
      'storage.memory.auth.enable',
      'storage.memory.auth.username',
      'storage.memory.auth.password',
    ]),
  );

  // --- router: the UI build at /ui/ and router.routes, asked before the disk serves a path ---
  const router = await Router.create(config, deps.logger);
  storage.diskFallbacks.push(router.claim);
  lifecycle.onReload(router.reloadStep);

  // --- auth: login routes and identity ---
  let configStore: ConfigStore | undefined;
  const auth = await createAuth(config, {
    logger: deps.logger,
    now: deps.now ?? Date.now,
    fetch: deps.fetch ?? fetch,
    loadedAtMs: () => configStore?.loadedAt ?? startedAtMs,
    localOnly,
  });
  // Also guards every route under /api/v3 registered after this line, in whatever scope.
  await auth.register(server);
  lifecycle.onShutdown(() => auth.close());
  lifecycle.onReload(auth.reloadStep(config));
  lifecycle.onReload(logLevelReloadStep(deps.logger));
  // Read from the running config by every request that needs them.
  lifecycle.onReload(readAtUse('identity', ['name', 'host.name']));
  // Read by each process's report on every line and run.
  lifecycle.onReload(readAtUse('process logs', ['ffmpeg.log.max_lines', 'ffmpeg.log.max_history']));

  // --- skills: what the configured ffmpeg can do, learned once at start and on each reload ---
  const skills = new SkillsService({
    binary: config.ffmpeg.binary,
    spawn: deps.spawn ?? spawn,
    logger: deps.logger,
  });
  // Once the listener is open: its seven runs of the binary would compete with the start for the
  // CPU. A request before then waits for the load (SkillsService.settled).
  lifecycle.onListen(() => void skills.start());

  // --- sessions ---
  const sessions = await createSessions(server, config, {
    logger: deps.logger,
    now,
    lifecycle,
    mountHooks: storage.mountHooks,
    events: events.bus,
  });
  collectors.push(sessions.metrics);

  // --- ingest: RTMP and SRT servers ---
  // Before processes: it listens first (a restored process may read `{rtmp}` at once) and closes
  // after they stopped (shutdown steps run in reverse).
  const ingest = createIngest(config, {
    logger: deps.logger,
    now,
    lifecycle,
    // Counted while `sessions.enable` is on, which they read at each connection (a reload may turn it).
    rtmpCollector: sessions.collectors.get('rtmp'),
    srtCollector: sessions.collectors.get('srt'),
    certificate: tls.certificate,
    events: events.bus,
  });

  // --- processes ---
  // Encoders die with the server (parent-death signal) and are recorded in the db directory, so
  // that a restart stops any that survived (a stopped one) before it starts its own (issue 10).
  await encoders.stopSurvivors();
  const encoderSpawn = await spawnForEncoders;
  // In a cluster etcd keeps the processes and the node runs encoders only under its lease (docs/cluster.md).
  const cluster = config.cluster.enable
    ? new Cluster({ config, logger: deps.logger, now, fetch: deps.fetch ?? fetch })
    : undefined;
  const processes = await ProcessService.create({
    config,
    logger: deps.logger,
    spawn: cluster?.gate(encoders.wrap(encoderSpawn)) ?? encoders.wrap(encoderSpawn),
    store: cluster?.storeFor,
    now,
    schedule: deps.schedule,
    procRoot: deps.procRoot ?? '/proc',
    cpus: availableParallelism(),
    filesystems: storage.filesystems,
    templates: ingest.placeholders,
    localStreams: ingest.localStreams,
    secrets: () => [config.rtmp.token, config.srt.token, config.srt.passphrase],
    configFile: deps.configFile,
    memfsGrants: storage.memfsGrants,
    events: events.bus,
  });
  collectors.push(createFfmpegCollector(processes), createRestreamCollector(processes));
  storage.mountHooks.push(processes.inputReadMeter);
  // After the server listens: {memfs} needs the base URL, and restored processes write into it.
  lifecycle.onListen((baseUrl) => processes.start(baseUrl));
  // A reload of `address` moves the listener; processes started from then on write to the new one.
  const httpAddress = new HttpAddress({
    http: server.server,
    logger: deps.logger,
    moved: (baseUrl) => {
      apiWorkers?.listenerMoved();
      processes.serverMoved(baseUrl);
      cluster?.serverMoved(baseUrl);
    },
  });
  lifecycle.onReload(httpAddress.reloadStep);
  // After the ingest steps (registered before): `{rtmp}` and `{srt}` stand for the new listeners
  // and tokens, and the new secrets are masked.
  lifecycle.onReload({
    name: 'placeholders',
    keys: [
      'rtmp.enable',
      'rtmp.address',
      'rtmp.app',
      'rtmp.token',
      'srt.enable',
      'srt.address',
      'srt.token',
      'srt.passphrase',
      // The secrets the processes' reports and commands mask.
      'storage.memory.auth.enable',
      'storage.memory.auth.username',
      'storage.memory.auth.password',
    ],
    prepare: (next) => {
      // Every run writes memfs with a credential of its own, issued whether needed or not; turned
      // on, only a memfs name no credential can cover would be refused (the reload is, instead).
      const turnedOn = next.storage.memory.auth.enable && !config.storage.memory.auth.enable;
      const problems = turnedOn ? processes.memfsAuthProblems() : [];
      if (problems.length > 0) throw Object.assign(new Error(problems.join('; ')), { problems });
      return { commit: () => processes.placeholdersChanged(), abort: () => undefined };
    },
  });
  lifecycle.onFinal(() => httpAddress.close());
  // Shutdown steps run in reverse: encoders stop while memfs still takes their last writes.
  lifecycle.onShutdown(() => processes.shutdown());
  if (cluster !== undefined) {
    cluster.attach(processes);
    lifecycle.onListen((baseUrl) => cluster.start(baseUrl));
    // Runs before the processes' shutdown: stops the encoders, then lets the cluster move them.
    lifecycle.onShutdown(() => cluster.close());
    cluster.registerForwarding(server);
  }

  // --- config: /api/v3/config in the v16 layout; a reload applies what it can while running ---
  // Every secret the server has held stays masked in its log, lines from before a reload too.
  const heldSecrets = new Set(configSecrets(config));
  deps.logBuffer?.onLine((line) => {
    const { component, fields } = logLineEvent(line, [...heldSecrets]);
    events.bus.publish('log', component, fields);
  });
  if (deps.configSource !== undefined) {
    const { fileJson, overrides, ...source } = deps.configSource;
    configStore = await ConfigStore.create({
      source,
      fileJson,
      running: config,
      overrides,
      now,
      apply: async (next) => {
        const nextStart = await applyLive(next, {
          running: config,
          steps: lifecycle.reloadable,
          logger: deps.logger,
        });
        for (const secret of configSecrets(config)) heldSecrets.add(secret);
        // Before the answer: no worker answers under the old config once the client has it.
        await apiWorkers?.configChanged();
        events.bus.publish('config', 'reload', { restart_needed: nextStart.length > 0 });
        return nextStart;
      },
    });
  }

  await server.register(
    async (v3) => {
      // --- /api/v3 routes ---
      // Guarded by the root hook auth.register installed, like every request under /api/v3.
      await registerMetricsApi(v3, monitor, config.api.max_body_kbytes * 1024);
      registerProcessRoutes(v3, processes);
      registerMetadataRoutes(v3, new SystemMetadata(processes.systemMetadata));
      registerProbeRoutes(v3, processes.probeSource, {
        binary: config.ffmpeg.binary,
        // Recorded like the encoders: a probe opens the same inputs, redirects included.
        spawn: encoders.wrap(encoderSpawn),
      });
      await storage.registerApi(v3);
      sessions.registerApi(v3);
      ingest.registerApi(v3);
      registerSkillsRoutes(v3, skills);
      registerLogRoutes(v3, deps.logBuffer ?? new LogBuffer(1), () => [...heldSecrets]);
      if (configStore !== undefined) registerConfigRoutes(v3, configStore, () => tls.status());
      events.registerApi(v3, {
        lists: {
          rtmp: () => Promise.resolve(ingest.rtmp?.channels() ?? []),
          srt: () => Promise.resolve(ingest.srt?.resources() ?? []),
          disk: async () => (await storage.filesystems.disk.list()).map((file) => file.name),
          mem: async () => (await storage.filesystems.mem.list()).map((file) => file.name),
        },
        compileGlob: (pattern) => {
          const glob = compileGlob(pattern);
          return (name) => glob.matches(name);
        },
      });
      cluster?.registerApi(v3);
    },
    { prefix: '/api/v3' },
  );
  // --- widget: the player site's public figures of a process, without a token (config.public) ---
  registerWidgetRoutes(server, processes, sessions.collectors.get('hls') as SessionCollector);

  // --- monitor: store, scheduler, metrics routes, Prometheus ---
  collectors.push(
    ...createHostCollectors({
      procRoot: deps.procRoot ?? '/proc',
      cgroupRoot: deps.cgroupRoot ?? '/sys/fs/cgroup',
      diskDir: config.storage.disk.dir,
      now,
      startedAtMs,
    }),
  );
  registerPrometheusEndpoint(server, monitor, config);

  // --- dashboard: the built page at /dashboard/ ---
  registerDashboardRoutes(server, await loadDashboardAssets(deps.dashboardDir ?? DEFAULT_DASHBOARD_DIR));
  lifecycle.onListen(() => monitor.start());
  lifecycle.onShutdown(() => monitor.stop());

  // --- API workers: logins and metric queries on the other cores, the state stays here ---
  const apiWorkers =
    deps.apiWorkerEntry === undefined
      ? undefined
      : createApiWorkers(config, {
          entry: deps.apiWorkerEntry,
          logger: deps.logger,
          http: server.server,
          monitor,
          onThrottleChange: (listener) => auth.onThrottleChange(listener),
          httpSessions: sessions.collectors.get('http') as SessionCollector,
          encoders,
        });
  // In the background: the listener serves while they start.
  lifecycle.onListen(() => void apiWorkers?.start());

  let closing: Promise<void> | undefined;
  return {
    server,
    config,
    monitor,
    ingest,
    processes,
    events: events.bus,
    description,
    tls,
    apiWorkers,
    async listen() {
      const address = resolveBindAddress(config);
      // Before the listener opens: a metrics query right after start finds the first snapshot.
      await monitor.collectFirst();
      await server.listen({ host: address.host, port: address.port });
      if (!config.api.auth.enable) warnAuthOff(deps.logger, config.address, address.narrowedToLoopback);
      const bound = server.server.address();
      if (bound === null || typeof bound === 'string') throw new Error('server is not listening on TCP');
      const baseUrl = loopbackBaseUrl(bound);
      // Before the ingest listeners: RTMPS serves the certificate this loads.
      await tls.open(config, server.server);
      await lifecycle.runListen(baseUrl);
      return baseUrl;
    },
    close() {
      closing ??= (async () => {
        // First: a worker stops accepting before the listener closes under it.
        await apiWorkers?.close();
        tls.close();
        const failures = await lifecycle.runShutdown();
        await server.close();
        failures.push(...(await lifecycle.runFinal()));
        for (const failure of failures) deps.logger.error({ err: failure }, 'shutdown step failed');
      })();
      return closing;
    },
  };
}

/**
 * What crashed servers left: temporaries of db.json and the encoders' `-vstats` FIFO directories
 * of servers that are gone (issue 10 item 9). Those of live servers carry a live pid and stay.
 */
async function removeLeftovers(dbDir: string, logger: Logger): Promise<void> {
  const removed = [
    ...(await removeStaleTemporaries(join(dbDir, 'db.json'))),
    ...(await removeStaleDirectories(tmpdir(), 'streamcore-vstats-')),
  ];
  if (removed.length > 0) logger.info({ removed }, 'removed what a crashed server left behind');
}

/** Logged at every start while the API is unprotected (docs/configuration.md#safe-first-start-differs-from-the-reference). */
function warnAuthOff(logger: Logger, address: string, narrowed: boolean): void {
  logger.warn(
    { address, loopbackOnly: narrowed },
    narrowed
      ? 'api.auth.enable is false: the API is open to anyone who can reach it; listening on loopback only because the address names no host'
      : 'api.auth.enable is false: the API is open to anyone who can reach this address; set api.auth.enable, or listen on loopback',
  );
}
