import type { UpstreamMap } from "../../dataplane/chain/nodes.ts";
import type { DestinationDeps } from "../../dataplane/destinations/index.ts";
import type { FilterHelpers, FilterLog, FilterMetadata } from "../../dataplane/sandbox/types.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import type { Mailer } from "../../platform/mail.ts";
import { catalogueNetwork } from "../catalogue/networks.ts";
import type { DatasetProbes } from "./probes.ts";

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
  /** The account's functions, as streams deliver to them (the functions domain's adapter). */
  functions: StreamFunctions;
  /** Which datasets each chain node serves, as probed (kept a while, shared by every caller). */
  probes: DatasetProbes;
}

/** A function a stream is created with (createStreamWithFunction): the function's create input. */
export interface NewStreamFunction {
  name: string;
  code: string;
  description?: string | null;
  timeoutSec?: number;
  memoryMb?: number;
}

/** What a test run of function code answers (the API's FunctionTestResult). */
export interface FunctionTestRun {
  success: boolean;
  result: unknown;
  logs: FilterLog[];
  size: number;
  duration: number;
  memory: number;
  memoryLimit: number;
  error: string | null;
}

/**
 * The port through which streams reach functions: a FUNCTION destination names one of the account's
 * functions, a stream can be created with a new function, and new function code can be tried on what a
 * stream would deliver. Declared here, where it is needed; the functions domain supplies the adapter
 * (functions/stream-port.ts) and the composition wires it, so streams never import functions (which read
 * blocks through streams).
 */
export interface StreamFunctions {
  /** Whether the account has a function with this id. */
  exists(db: Executor, accountId: string, functionId: string): Promise<boolean>;
  /** The names of the account's functions among `ids`, by id. */
  names(db: Executor, accountId: string, ids: string[]): Promise<Map<string, string>>;
  /** Refuses code that does not compile or has no main, on the field at `pointer`. */
  checkCode(accountId: string, code: string, pointer: string): Promise<void>;
  /** Creates the function inside the caller's transaction, within the plan's limits. */
  insert(tx: Executor, accountId: string, fn: NewStreamFunction, memoryPointer: string): Promise<{ id: string }>;
  /** Runs unsaved code on a payload within the account's limits; the run is billed, not kept. */
  testRun(
    db: Db,
    accountId: string,
    code: string,
    payload: { dataJson: string; metadata: FilterMetadata },
    limits: { timeoutSec?: number; memoryMb?: number },
    helpers: FilterHelpers,
  ): Promise<FunctionTestRun>;
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
