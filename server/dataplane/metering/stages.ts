import type { Logger } from "pino";
import type { AppConfig } from "../../platform/config.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { FlexibleRateLimitStage, type LimitSource } from "../ratelimit/stage.ts";
import { type MeterOptions, UsageMeter } from "./meter.ts";

export interface RpcStages {
  rateLimit: FlexibleRateLimitStage;
  meter: UsageMeter;
  /** Flushes the meter and stops timers and the Redis connection. */
  close(): Promise<void>;
}

/**
 * The proxy's rate-limit and meter stages, ready to pass to registerDataPlane:
 *
 *   const stages = await createRpcStages({ limits, meter: { sink, pricing }, events, config, log });
 *   registerDataPlane(app, { directory, upstreams, rateLimit: stages.rateLimit, meter: stages.meter });
 *   app.addHook("onClose", () => stages.close());
 *
 * Counters are in this process's memory, or in Redis when config.redisUrl (REDIS_URL) is set.
 */
export async function createRpcStages(deps: {
  /** What the rate-limit stage enforces. */
  limits: LimitSource;
  /** Where the meter writes and how it prices calls, with optional timings. */
  meter: MeterOptions;
  /** "ratelimits.changed" and "relay.resynced" reload the rate limits. */
  events: DomainEvents;
  config: Pick<AppConfig, "redisUrl">;
  log?: Logger;
  rateLimitRefreshMs?: number;
}): Promise<RpcStages> {
  // ioredis loads only when Redis is configured: a start without it does not pay for the import.
  const redis = deps.config.redisUrl
    ? new (await import("ioredis")).Redis(deps.config.redisUrl, {
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined;
  redis?.on("error", (error) =>
    deps.log?.warn({ err: error }, "rate limits: Redis error (limiting in memory meanwhile)"),
  );
  const rateLimit = await new FlexibleRateLimitStage({
    source: deps.limits,
    events: deps.events,
    redis,
    refreshMs: deps.rateLimitRefreshMs,
    log: deps.log,
  }).start();
  const meter = new UsageMeter({ log: deps.log, ...deps.meter }).start();
  return {
    rateLimit,
    meter,
    async close() {
      rateLimit.close();
      await meter.close();
      redis?.disconnect();
    },
  };
}
