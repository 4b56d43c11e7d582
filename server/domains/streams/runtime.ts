import type { UpstreamMap } from "../../dataplane/chain/nodes.ts";
import type { DestinationDeps } from "../../dataplane/destinations/index.ts";
import type { FilterHelpers } from "../../dataplane/sandbox/types.ts";
import { AppError } from "../../platform/errors.ts";
import type { Mailer } from "../../platform/mail.ts";
import { catalogueNetwork } from "../catalogue/networks.ts";

/**
 * What the streams and webhooks API needs from the running service: the chain nodes (to read blocks
 * for payload previews and filter tests), the engine (woken after an activation), the mailer and what
 * destinations call into. app.ts hands it to the streams, webhooks and functions plugins.
 */
export interface StreamsRuntime {
  upstreams: UpstreamMap;
  wake(): void;
  mailer: Mailer | null;
  destinationDeps: DestinationDeps;
  /** What filters and functions tested from the console reach as `qnLib`: the account's key-value store. */
  filterHelpers: (accountId: string) => FilterHelpers;
}

/** Where the streams functions find the runtime: the deps app.ts gives the plugins that call them. */
export interface StreamsServices {
  streams: StreamsRuntime;
}

export function streamsRuntime(services: StreamsServices): StreamsRuntime {
  return services.streams;
}

/** The chain node of a network; a name not in the catalogue is the caller's mistake, before any call. */
export function upstreamFor(services: StreamsServices, network: string) {
  catalogueNetwork(network);
  const upstream = services.streams.upstreams.get(network);
  if (!upstream) throw new AppError("UPSTREAM_FAILED", `Network ${network} has no chain node configured.`);
  return upstream;
}
