import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Lifecycle } from '../lifecycle/index.js';
import { EventBus } from './event-bus.js';
import { EventStreams } from './event-streams.js';
import { registerMediaRoute, type MediaSources } from './media-routes.js';
import { registerEventRoutes } from './routes.js';
import { withoutUserInfo } from './user-info.js';
import { createPostJson, type PostJson } from './webhook-post.js';
import { DEFAULT_DELIVERY, Webhook, type DeliveryLimits, type Timers } from './webhook.js';

export interface EventsDeps {
  logger: Logger;
  now: () => number;
  lifecycle: Lifecycle;
  /** The webhooks' timers (time-outs, back-off); default the real ones. */
  timers?: Timers;
  /** How a delivery is POSTed; default node's client with the address checks (webhook-post.ts). */
  post?: PostJson;
  /** Overrides of the delivery limits (tests: shorter waits). */
  delivery?: Partial<DeliveryLimits>;
  /** Why the server must not send to a URL (the encoders' output rules), or undefined. */
  refuseUrl?: (url: string) => string | undefined;
}

/** What `/api/v3/events/media/{type}` lists. */
export type MediaLists = Omit<MediaSources, 'now' | 'listEveryMs'>;

/** The event bus with its streams and webhooks, as the app wires them. */
export interface Events {
  readonly bus: EventBus;
  /** `/api/v3/events…`, into the guarded `/api/v3` scope. */
  registerApi(v3: FastifyInstance, media: MediaLists): void;
}

const REAL_TIMERS: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Builds the bus (`events.replay_events`), one webhook per `events.webhooks` item subscribed to it,
 * and the streams. At shutdown (registered first, so it runs last): the last events go out, the
 * streams end, the webhooks stop.
 */
export function createEvents(config: Config, deps: EventsDeps): Events {
  const settings = config.events;
  const bus = new EventBus({
    replayEvents: settings.replay_events,
    now: deps.now,
    onSubscriberError: (error) =>
      deps.logger.error({ err: error, component: 'events' }, 'event subscriber failed'),
  });
  const post = deps.post ?? createPostJson(settings.allow_loopback_webhooks);
  const limits: DeliveryLimits = {
    ...DEFAULT_DELIVERY,
    maxQueued: settings.webhook_queue_events,
    ...deps.delivery,
  };
  for (const [index, hook] of settings.webhooks.entries()) {
    const refusal = deps.refuseUrl?.(hook.url);
    // Fails the start, naming the key: a hook that may never deliver is a configuration error.
    if (refusal !== undefined)
      throw new Error(`events.webhooks: item ${index + 1}: ${withoutUserInfo(refusal)}`);
  }
  const webhooks = settings.webhooks.map(
    (hook) =>
      new Webhook(hook, {
        post,
        timers: deps.timers ?? REAL_TIMERS,
        now: deps.now,
        logger: deps.logger,
        limits,
      }),
  );
  for (const hook of webhooks) bus.subscribe(hook);
  const streams = new EventStreams({
    bus,
    logger: deps.logger,
    now: deps.now,
    maxBufferedBytes: settings.max_buffered_kbytes * 1024,
    keepaliveMs: 5000,
  });
  deps.lifecycle.onShutdown(() => {
    streams.closeAll();
    for (const hook of webhooks) hook.close();
  });
  return {
    bus,
    registerApi: (v3, media) => {
      registerEventRoutes(v3, streams, () => webhooks.map((hook) => hook.state()));
      registerMediaRoute(v3, streams, { ...media, now: deps.now, listEveryMs: 30_000 });
    },
  };
}
