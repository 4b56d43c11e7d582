import type { UpstreamMap } from "../../dataplane/chain/nodes.ts";
import type { DestinationDeps } from "../../dataplane/destinations/index.ts";
import { AppError } from "../../platform/errors.ts";
import type { Mailer } from "../../platform/mail.ts";

/**
 * What the streams and webhooks API needs from the running service: the chain nodes (to read blocks
 * for payload previews and filter tests), the engine (woken after an activation) and the mailer.
 * `startStreamEngine` attaches it to the app's Services; until then chain-reading calls answer
 * UPSTREAM_FAILED saying no chain node is connected, and lifecycle calls still work.
 */
export interface StreamsRuntime {
  upstreams: UpstreamMap;
  wake(): void;
  mailer: Mailer | null;
  destinationDeps?: DestinationDeps;
}

const runtimes = new WeakMap<object, StreamsRuntime>();

export function attachStreamsRuntime(services: object, runtime: StreamsRuntime): void {
  runtimes.set(services, runtime);
}

export function streamsRuntime(services: object): StreamsRuntime | undefined {
  return runtimes.get(services);
}

export function upstreamFor(services: object, network: string) {
  const runtime = runtimes.get(services);
  if (!runtime)
    throw new AppError("UPSTREAM_FAILED", "No chain node is connected to this service, so blocks cannot be read.");
  const upstream = runtime.upstreams.get(network);
  if (!upstream) throw new AppError("UPSTREAM_FAILED", `Network ${network} has no chain node configured.`);
  return upstream;
}
