import type { FastifyInstance } from "fastify";
import type { DomainEvents } from "../../platform/events.ts";
import type { UpstreamMap } from "../chain/nodes.ts";
import type { DataPlane } from "./plane.ts";
import { registerDataPlane } from "./register.ts";
import type { ServedMethods } from "./served-methods.ts";
import type { MeterStage, RateLimitStage } from "./stages.ts";
import { type EndpointRecordSource, SyncedEndpointDirectory } from "./synced-directory.ts";

export interface MountDataPlaneDeps {
  /** The endpoints the proxy serves. */
  records: EndpointRecordSource;
  events: DomainEvents;
  upstreams: UpstreamMap;
  /** The rate-limit stage (none configured: every call is admitted). */
  rateLimit?: RateLimitStage;
  /** The metering stage (none attached: nothing is recorded). */
  meter?: MeterStage;
  log?: (message: string, error?: unknown) => void;
  /** Most calls in one batch (see DataPlaneDeps.maxBatchCalls). */
  maxBatchCalls?: number;
  /** See DataPlaneDeps.trustsProxy. */
  trustsProxy?: (address: string) => boolean;
  /** See DataPlaneDeps.served. */
  served?: ServedMethods;
}

/**
 * The data plane as the service runs it: the endpoint directory (loaded before this
 * returns, refreshed by "endpoint.changed" events and LISTEN/NOTIFY) and the proxy mounted on `app`.
 * Call from buildApp before the app listens; `app.close()` closes both.
 */
export async function mountDataPlane(
  app: FastifyInstance,
  deps: MountDataPlaneDeps,
): Promise<{ plane: DataPlane; directory: SyncedEndpointDirectory }> {
  const directory = new SyncedEndpointDirectory(deps.records, deps.events, { log: deps.log });
  await directory.start();
  const plane = registerDataPlane(app, {
    directory,
    upstreams: deps.upstreams,
    rateLimit: deps.rateLimit,
    meter: deps.meter,
    maxBatchCalls: deps.maxBatchCalls,
    trustsProxy: deps.trustsProxy,
    served: deps.served,
    onError: (error) => deps.log?.("a data plane stage failed", error),
  });
  app.addHook("onClose", async () => directory.close());
  return { plane, directory };
}
