import type { DestinationDeps } from "./dataplane/destinations/index.ts";
import type { EngineStore } from "./dataplane/engine/store.ts";
import type { FilterHelpers } from "./dataplane/sandbox/types.ts";
import { functionInvoker } from "./domains/functions/invoker.ts";
import type { FunctionRuns } from "./domains/functions/service.ts";
import { engineStore } from "./domains/streams/engine-store.ts";
import type { Db } from "./platform/db/index.ts";
import type { EgressPolicy } from "./platform/egress.ts";

/** The stream engine's ports that the domains fill (see StreamEngineDeps). */
export interface EnginePorts {
  store: EngineStore;
  destinationDeps: DestinationDeps;
  filterHelpers: (accountId: string) => FilterHelpers;
}

/**
 * The stream engine's ports, each filled with a domain's adapter: the streams' EngineStore, the functions
 * runtime that FUNCTION destinations call, and the key-value store filters reach as `qnLib` (the one the
 * process's functions reach). One place for every engine: the service's own (app.ts), its engine child and
 * a standalone engine (engine.ts). The streams API runs filter and destination tests with the same
 * destinationDeps and filterHelpers.
 */
export function enginePorts(db: Db, egress: EgressPolicy, functionRuns: FunctionRuns): EnginePorts {
  return {
    store: engineStore,
    destinationDeps: { egress, functionInvoker: functionInvoker(db, functionRuns) },
    filterHelpers: functionRuns.helpers,
  };
}
