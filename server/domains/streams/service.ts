import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  BlockNotAvailableError,
  EVM_DATASETS,
  type EvmDataset,
  EvmDatasetReader,
} from "../../dataplane/datasets/reader.ts";
import { RpcError } from "../../dataplane/datasets/rpc.ts";
import {
  createDestination,
  type DestinationAttributes,
  namedAddresses,
  type TestResult,
} from "../../dataplane/destinations/index.ts";
import {
  destinationAttributesOf,
  isUrlPassword,
  MASK,
  maskUrlPassword,
  openSecrets,
  sealSecrets,
  splitSecrets,
  storedSecrets,
  URL_ATTRIBUTES,
  withUrlPasswords,
} from "../../dataplane/engine/config.ts";
import { LatencySketch } from "../../dataplane/latency-sketch.ts";
import { createFilter, filterErrorMessage, testFilter } from "../../dataplane/sandbox/filter.ts";
import type {
  FilterError,
  FilterHelpers,
  FilterLog,
  FilterMetadata,
  FilterVersion,
} from "../../dataplane/sandbox/types.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { EgressRefused } from "../../platform/egress.ts";
import { AppError, badInput, conflict, type FieldError, foundOr, notFound } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import type { SecretBox } from "../../platform/secrets.ts";
import { bucketSeries, type MetricsWindow, metricsWindow } from "../../platform/time-buckets.ts";
import { validateInput } from "../../platform/validation.ts";
import { planPriceCents } from "../account/service.ts";
import { type CatalogueNetwork, catalogueNetwork, findNetwork, needsUpgrade } from "../catalogue/networks.ts";
import { applyStreamEvent, restartsDelivery, wholeRangeDelivered } from "./lifecycle.ts";
import { destinationOptions, streamPermissions, unavailableFields } from "./permissions.ts";
import { type NewStreamFunction, type StreamsServices, streamsRuntime, upstreamFor } from "./runtime.ts";
import * as store from "./store.ts";

const PREVIEW_CHARS = 2000;

export interface StreamInput {
  name?: string;
  network?: string;
  dataset?: string;
  datasetBatchSize?: number;
  elasticBatchEnabled?: boolean;
  includeStreamMetadata?: string;
  destination?: string;
  destinationAttributes?: Record<string, unknown>;
  startRange?: number;
  endRange?: number | null;
  filterFunction?: string | null;
  filterVersion?: string;
  fixBlockReorgs?: boolean;
  keepDistanceFromTip?: number;
  notificationEmail?: string | null;
  region?: string;
  status?: string;
}

/** A stream input that names its network, dataset and destination (what the rules check). */
type TargetedStream = Required<Pick<StreamInput, "network" | "dataset" | "destination">> & StreamInput;

/**
 * The rules every stream (and webhook) obeys beyond its JSON Schema, including that its destination
 * and dataset are not disabled in the stream permissions (the same function builds both).
 */
async function checkRules(
  db: Executor,
  accountId: string,
  s: TargetedStream,
  services: StreamsServices | undefined,
  checkAvailability = true,
): Promise<void> {
  const fields = [];
  const found = findNetwork(s.network);
  if (!found) fields.push({ pointer: "/network", message: "This network is not in the catalogue." });
  else if (found.chain.chainCompatibility !== "evm")
    fields.push({ pointer: "/network", message: "Streams are served on EVM networks only for now." });
  else if (checkAvailability) {
    const refused = await planRefusal(db, accountId, found.network);
    if (refused) fields.push(refused);
  }
  if (checkAvailability) fields.push(...(await unavailableFields(services, s)));
  if (
    s.endRange !== null &&
    s.endRange !== undefined &&
    s.startRange !== undefined &&
    s.startRange >= 0 &&
    s.endRange < s.startRange
  )
    fields.push({ pointer: "/endRange", message: "The end block must not be before the start block." });
  if (fields.length) throw badInput(fields);
}

/**
 * Where a filter's compile error is, as its message begins: "Line 3, column 7: …".
 */
export function filterErrorPlace(error: FilterError): string {
  if (!error.line) return error.message;
  return `Line ${error.line}${error.column ? `, column ${error.column}` : ""}: ${error.message}`;
}

/**
 * A filter that does not compile (or fails while loading, or has no main) is refused on save, with
 * where the error is, so a stream never starts only to be terminated by its own filter.
 */
export async function checkFilterCompiles(
  accountId: string,
  source: string | null | undefined,
  version: string | undefined,
) {
  if (!source) return;
  const filter = await createFilter({ source, version: (version ?? "V5") as FilterVersion, owner: accountId });
  try {
    const error = await filter.check();
    if (error) throw badInput([{ pointer: "/filterFunction", message: filterErrorPlace(error) }]);
  } finally {
    filter.dispose();
  }
}

/**
 * A destination address the egress policy refuses (an IP address, "localhost", this service's own
 * ports) is refused on save, on the field that names it: a webhook names its URL at the top level.
 * Host names are resolved and checked again at every connection.
 */
function checkDestinationAddresses(services: StreamsServices | undefined, s: StreamInput, product: store.Product) {
  const egress = services?.streams.destinationDeps.egress;
  if (!egress || !s.destination) return;
  const fields: FieldError[] = [];
  for (const address of namedAddresses(s.destination, s.destinationAttributes ?? {})) {
    if (address.url && egress.isOwnRoute(address.url)) continue;
    try {
      egress.checkHost(address.host, address.port);
    } catch (e) {
      if (!(e instanceof EgressRefused)) throw e;
      const pointer = product === "WEBHOOK" ? `/${address.attribute}` : `/destinationAttributes/${address.attribute}`;
      fields.push({ pointer, message: `${e.message[0].toUpperCase()}${e.message.slice(1)}.` });
    }
  }
  if (fields.length) throw badInput(fields);
}

/** A FUNCTION destination must name one of the account's own functions. */
async function checkFunctionTarget(
  services: StreamsServices,
  db: Executor,
  accountId: string,
  s: StreamInput,
): Promise<void> {
  if (s.destination !== "FUNCTION") return;
  const functionId = s.destinationAttributes?.functionID;
  const found =
    typeof functionId === "string" && (await streamsRuntime(services).functions.exists(db, accountId, functionId));
  if (!found)
    throw badInput([{ pointer: "/destinationAttributes/functionID", message: "Choose one of your functions." }]);
}

function newStreamValues(box: SecretBox, input: StreamInput, product: store.Product): store.NewStream {
  const s = input as TargetedStream;
  const { shown, secrets } = splitSecrets(input.destinationAttributes ?? {});
  return {
    product,
    name: input.name ?? "",
    status: "PAUSED",
    network: s.network,
    dataset: s.dataset,
    datasetBatchSize: input.datasetBatchSize ?? 1,
    elasticBatchEnabled: input.elasticBatchEnabled ?? true,
    includeStreamMetadata: input.includeStreamMetadata ?? "NONE",
    destination: s.destination,
    destinationAttributes: shown,
    destinationSecrets: sealSecrets(box, secrets),
    startRange: input.startRange ?? -1,
    endRange: input.endRange ?? null,
    filterFunction: input.filterFunction || null,
    filterVersion: input.filterVersion ?? "V5",
    fixBlockReorgs: input.fixBlockReorgs ?? false,
    keepDistanceFromTip: input.keepDistanceFromTip ?? 0,
    notificationEmail: input.notificationEmail || null,
    region: input.region ?? "USA_EAST",
  };
}

export async function createStream(
  db: Db,
  box: SecretBox,
  accountId: string,
  input: StreamInput,
  product: store.Product,
  services: StreamsServices,
) {
  const s = input as TargetedStream;
  await checkRules(db, accountId, s, services);
  checkDestinationAddresses(services, s, product);
  await checkFunctionTarget(services, db, accountId, s);
  await checkFilterCompiles(accountId, input.filterFunction, input.filterVersion);
  const row = await store.insertStream(db, accountId, newStreamValues(box, input, product));
  if (input.status === "ACTIVE") return activateStream(db, accountId, row.id, product);
  return row;
}

/**
 * A new function and a stream that delivers to it, in one transaction: both are checked first, and
 * neither exists unless both do.
 */
export async function createStreamWithFunction(
  db: Db,
  box: SecretBox,
  accountId: string,
  input: Omit<StreamInput, "destination"> & { function: NewStreamFunction },
  services: StreamsServices,
) {
  const { function: fn, ...rest } = input;
  const stream: StreamInput = { ...rest, destination: "FUNCTION" };
  const functions = streamsRuntime(services).functions;
  await checkRules(db, accountId, stream as TargetedStream, services);
  await checkFilterCompiles(accountId, stream.filterFunction, stream.filterVersion);
  await functions.checkCode(accountId, fn.code, "/function/code");
  const row = await db.transaction(async (tx) => {
    const created = await functions.insert(tx, accountId, fn, "/function/memoryMb");
    const attributes = { ...stream.destinationAttributes, functionID: created.id };
    return store.insertStream(
      tx,
      accountId,
      newStreamValues(box, { ...stream, destinationAttributes: attributes }, "STREAM"),
    );
  });
  if (input.status === "ACTIVE") return activateStream(db, accountId, row.id, "STREAM", services);
  return row;
}

/** The keys of a stream's create input a stored row has (all but `status`, which has its own mutations). */
const STORED_INPUT_KEYS = [
  "name",
  "network",
  "dataset",
  "datasetBatchSize",
  "elasticBatchEnabled",
  "includeStreamMetadata",
  "destination",
  "startRange",
  "endRange",
  "filterFunction",
  "filterVersion",
  "fixBlockReorgs",
  "keepDistanceFromTip",
  "notificationEmail",
  "region",
] as const;

/** Stored keys where an empty text sent in an update means none. */
const EMPTY_MEANS_NONE: ReadonlySet<string> = new Set(["filterFunction", "notificationEmail"]);

/**
 * The stream as it would be after `patch`, in its create input's shape, so a partial update is checked
 * whole: attributes sent alone are checked against the stored destination's schema, and a new
 * destination needs its attributes. Secrets left out or sent masked count as their stored values.
 */
function wholeAfterUpdate(box: SecretBox, current: store.StreamRow, patch: StreamInput): Record<string, unknown> {
  const whole: Record<string, unknown> = {};
  for (const k of STORED_INPUT_KEYS) {
    const value = patch[k] !== undefined ? patch[k] : current[k];
    if (value !== null && value !== undefined) whole[k] = value;
  }
  const destinationChanged = patch.destination !== undefined && patch.destination !== current.destination;
  const stored = destinationChanged ? {} : storedSecrets(box, current);
  const attributes: Record<string, unknown> =
    patch.destinationAttributes === undefined
      ? { ...(destinationChanged ? {} : current.destinationAttributes), ...stored }
      : {};
  for (const [k, v] of Object.entries(patch.destinationAttributes ?? {})) {
    if (v !== MASK) attributes[k] = v;
    else if (stored[k] !== undefined) attributes[k] = stored[k];
  }
  whole.destinationAttributes = withUrlPasswords(attributes);
  return whole;
}

export async function updateStream(
  db: Db,
  box: SecretBox,
  accountId: string,
  id: string,
  patch: StreamInput,
  product: store.Product,
  services: StreamsServices,
) {
  return db.transaction(async (tx) => {
    const current = await ownedStream(tx, accountId, id, product);
    const merged = {
      ...current,
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
    } as StreamInput & typeof current;
    validateInput("stream#/$defs/createInput", wholeAfterUpdate(box, current, patch));
    // A stream whose node later went away can still be renamed or paused; only a new target is checked.
    const targetChanged = (["network", "dataset", "destination"] as const).some(
      (k) => patch[k] !== undefined && patch[k] !== current[k],
    );
    await checkRules(tx, accountId, merged, services, targetChanged);
    if (patch.filterFunction !== undefined || patch.filterVersion !== undefined)
      await checkFilterCompiles(accountId, merged.filterFunction, merged.filterVersion);
    if (targetChanged || patch.destinationAttributes !== undefined) {
      checkDestinationAddresses(services, merged, product);
      await checkFunctionTarget(services, tx, accountId, merged);
    }
    const values: Partial<store.NewStream> = {};
    for (const k of STORED_INPUT_KEYS) {
      if (patch[k] === undefined) continue;
      (values as Record<string, unknown>)[k] = EMPTY_MEANS_NONE.has(k) ? patch[k] || null : patch[k];
    }
    if (patch.destinationAttributes !== undefined || (patch.destination && patch.destination !== current.destination)) {
      const { shown, secrets } = splitSecrets(patch.destinationAttributes ?? {});
      // A secret left out (or sent back masked) keeps its stored value, unless the destination type changed.
      const kept = patch.destination && patch.destination !== current.destination ? {} : storedSecrets(box, current);
      for (const [k, v] of Object.entries(secrets)) if (v !== MASK) kept[k] = v;
      values.destinationAttributes = shown;
      values.destinationSecrets = sealSecrets(box, kept);
    }
    if (restartsDelivery(current, patch)) await store.resetProgress(tx, accountId, id);
    const row = foundOr(await store.updateStream(tx, accountId, id, values), "Stream");
    return row;
  });
}

export async function activateStream(
  db: Db,
  accountId: string,
  id: string,
  product: store.Product,
  services?: StreamsServices,
) {
  const current = await ownedStream(db, accountId, id, product);
  if (current.status === "COMPLETED") {
    const progress = (await store.progressOf(db, accountId, [id])).get(id);
    if (wholeRangeDelivered(current.endRange, progress?.nextBlock))
      throw conflict("This stream delivered its whole range; move its end block before activating it again.");
  }
  const row = await applyStreamEvent(db, accountId, id, "ACTIVATE", { product });
  if (services) streamsRuntime(services)?.wake();
  return row;
}

export function pauseStream(db: Db, accountId: string, id: string, product: store.Product) {
  return applyStreamEvent(db, accountId, id, "PAUSE", { product });
}

export async function migrateStream(db: Db, accountId: string, id: string, region: string) {
  await ownedStream(db, accountId, id, "STREAM");
  return foundOr(await store.updateStream(db, accountId, id, { region }), "Stream");
}

export async function deleteStream(db: Db, accountId: string, id: string, product: store.Product) {
  if (!(await store.deleteStream(db, accountId, id, product))) throw notFound(productName(product));
  return { success: true, message: product === "WEBHOOK" ? "Webhook deleted." : "Stream deleted.", error: null };
}

// ---------------------------------------------------------------- reading

const productName = (product: store.Product) => (product === "WEBHOOK" ? "Webhook" : "Stream");

/** The account's stream (or webhook) with this id, or NOT_FOUND. */
export async function ownedStream(db: Executor, accountId: string, id: string, product: store.Product) {
  return foundOr(await store.getStream(db, accountId, id, product), productName(product));
}

/** The account's streams (or webhooks), newest first; `sizeArgument` is what the query calls `first`. */
export async function listStreams(
  db: Db,
  accountId: string,
  product: store.Product,
  args: { first?: number | null; after?: string | null; search?: string | null },
  sizeArgument = "first",
) {
  const size = pageSize(args.first, { argument: sizeArgument });
  const page = await store.listStreams(db, accountId, product, {
    limit: size + 1,
    after: cursorArgument(args.after, store.streamCursorShape),
    search: args.search,
  });
  return { ...connection(page.rows, size, store.streamCursorOf), totalCount: page.totalCount };
}

/** A stream's (or webhook's) log, newest first, after checking the account owns it. */
export async function streamLogs(
  db: Db,
  accountId: string,
  id: string,
  product: store.Product,
  args: { first?: number | null; after?: string | null; levels?: string[] | null; searchText?: string | null },
) {
  const after = cursorArgument(args.after, store.logCursorShape);
  const size = pageSize(args.first, { fallback: 50 });
  await ownedStream(db, accountId, id, product);
  const rows = await store.logs(db, accountId, id, {
    limit: size + 1,
    after,
    levels: args.levels,
    searchText: args.searchText,
  });
  return connection(rows, size, store.logCursorOf);
}

/**
 * A stream's (or webhook's) metrics per point of its window, after checking the account owns it: from
 * `start` (without one, "All time": from its first recorded minute) to `end` (default now), the step
 * chosen from the window's length.
 */
export async function metricBuckets(
  db: Db,
  accountId: string,
  id: string,
  product: store.Product,
  start: Date | null,
  end: Date | null,
) {
  await ownedStream(db, accountId, id, product);
  const firstMinute = start ? null : await store.firstMetricMinute(db, accountId, id);
  const window = metricsWindow(start, end, { firstMinute });
  return { window, rows: await store.metricBuckets(db, accountId, id, window) };
}

export const progressOf = (db: Db, accountId: string, ids: string[]) => store.progressOf(db, accountId, ids);

export const countStreams = (db: Db, accountId: string, product: store.Product) =>
  store.countStreams(db, accountId, product);

/** Names of the account's streams that deliver to a function (a function in use cannot be deleted). */
export const streamsDeliveringTo = (db: Executor, accountId: string, functionId: string) =>
  store.streamsDeliveringTo(db, accountId, functionId);

/** Delivery resumes at this block on the next activation. */
export const setCheckpoint = (db: Db, accountId: string, id: string, nextBlock: number) =>
  store.setCheckpoint(db, accountId, id, nextBlock);

/** Attributes as the API shows them: secrets masked. */
export function shownAttributes(
  row: store.StreamRow,
  box: SecretBox,
): { attributes: Record<string, unknown>; hasSecrets: boolean } {
  const secrets = openSecrets(box, row.destinationSecrets);
  const attributes: Record<string, unknown> = { ...row.destinationAttributes };
  for (const k of Object.keys(secrets)) if (!isUrlPassword(k)) attributes[k] = MASK;
  // A URL stored before URL passwords were sealed still holds its own.
  for (const k of URL_ATTRIBUTES) if (k in attributes) attributes[k] = maskUrlPassword(attributes[k]);
  return { attributes, hasSecrets: Object.keys(secrets).length > 0 };
}

// ---------------------------------------------------------------- reading blocks

/** Whose read of chain data this is: the account, whose plan decides which networks it may read. */
export interface ChainReadFor {
  db: Executor;
  accountId: string;
}

/** Why the account's plan may not use the network (needsUpgrade, what the permissions show), or null. */
async function planRefusal(
  db: Executor,
  accountId: string,
  network: CatalogueNetwork,
  pointer = "/network",
): Promise<FieldError | null> {
  return needsUpgrade(network, await planPriceCents(db, accountId))
    ? { pointer, message: `${network.label} needs a paid plan: upgrade to use it.` }
    : null;
}

/** A network as the account may read or stream it: in the catalogue, and allowed by its plan (planRefusal). */
async function accountNetwork(db: Executor, accountId: string, network: string, pointer = "/network") {
  const found = catalogueNetwork(network, pointer);
  const refused = await planRefusal(db, accountId, found.network, pointer);
  if (refused) throw badInput([refused]);
  return found;
}

async function withReader<T>(
  services: StreamsServices,
  who: ChainReadFor,
  network: string,
  fn: (r: EvmDatasetReader) => Promise<T>,
): Promise<T> {
  await accountNetwork(who.db, who.accountId, network);
  const reader = new EvmDatasetReader(upstreamFor(services, network).httpUrl, { timeoutMs: 15_000 });
  try {
    return await fn(reader);
  } catch (e) {
    if (e instanceof BlockNotAvailableError)
      throw badInput([{ pointer: "/blockNumber", message: `Block ${e.blockNumber} is not on the chain yet.` }]);
    if (e instanceof AppError) throw e;
    throw new AppError(
      "UPSTREAM_FAILED",
      `The ${network} node could not answer: ${e instanceof RpcError ? e.rpcMessage : (e as Error).message}`,
    );
  } finally {
    await reader.close();
  }
}

export function latestBlock(services: StreamsServices, who: ChainReadFor, network: string): Promise<number> {
  return withReader(services, who, network, (r) => r.latestBlock());
}

export async function readBatch(
  services: StreamsServices,
  who: ChainReadFor,
  network: string,
  dataset: string,
  blockNumber: number,
  batchSize = 1,
) {
  if (!(EVM_DATASETS as readonly string[]).includes(dataset))
    throw badInput([{ pointer: "/dataset", message: `${dataset} is not served on EVM networks.` }]);
  return withReader(services, who, network, (r) =>
    r.fetchBatch(dataset as EvmDataset, blockNumber, blockNumber + Math.max(1, batchSize) - 1),
  );
}

export function payloadResult(json: string | null) {
  if (json === null) return { payload: null, preview: "null", size: 0 };
  return { payload: JSON.parse(json) as unknown, preview: json.slice(0, PREVIEW_CHARS), size: Buffer.byteLength(json) };
}

interface BlockFilterInput {
  network: string;
  dataset: string;
  blockNumber: number;
  batchSize?: number;
  filterFunction?: string | null;
  filterVersion?: string;
}

/** A batch as the engine would hand it to a filter (or a function called on a block): its JSON and the engine's metadata. */
export async function blockPayload(services: StreamsServices, who: ChainReadFor, input: BlockFilterInput) {
  const batch = await readBatch(services, who, input.network, input.dataset, input.blockNumber, input.batchSize ?? 1);
  const metadata = {
    dataset: input.dataset,
    network: input.network,
    batch_start_range: batch.fromBlock,
    batch_end_range: batch.toBlock,
    start_range: batch.fromBlock,
    end_range: batch.toBlock,
    keep_distance_from_tip: 0,
    is_reorg: false,
  };
  return { dataJson: JSON.stringify(batch.items), metadata };
}

function runFilter(
  accountId: string,
  filterFunction: string,
  filterVersion: string | undefined,
  dataJson: string,
  metadata: FilterMetadata,
  helpers: FilterHelpers,
) {
  return testFilter(
    { source: filterFunction, version: (filterVersion ?? "V5") as FilterVersion, helpers, owner: accountId },
    { data: dataJson, metadata },
  );
}

/** Runs a filter on a block for the account, outside the engine, with the account's `qnLib`. */
export async function runFilterOn(
  services: StreamsServices,
  who: ChainReadFor,
  input: BlockFilterInput & { filterFunction: string },
) {
  const { accountId } = who;
  const { dataJson, metadata } = await blockPayload(services, who, input);
  const helpers = streamsRuntime(services).filterHelpers(accountId);
  const outcome = await runFilter(accountId, input.filterFunction, input.filterVersion, dataJson, metadata, helpers);
  if (!outcome.ok)
    return {
      result: null,
      logs: outcome.logs,
      size: 0,
      durationMs: outcome.durationMs,
      error: filterErrorMessage(outcome.error),
      errorKind: outcome.error.kind,
    };
  const shown = payloadResult(outcome.resultJson);
  return {
    result: shown.payload,
    logs: outcome.logs,
    size: outcome.sizeBytes,
    durationMs: outcome.durationMs,
    error: null,
    errorKind: null,
  };
}

/**
 * Runs new function code on what a stream would deliver for a block: the stream's filter first (when
 * given), then the function with that result as params.data. Nothing is saved; the run is billed.
 */
export async function runNewFunctionOn(
  db: Db,
  services: StreamsServices,
  accountId: string,
  input: BlockFilterInput & { code: string; timeoutSec?: number; memoryMb?: number },
) {
  const { dataJson, metadata } = await blockPayload(services, { db, accountId }, input);
  const helpers = streamsRuntime(services).filterHelpers(accountId);
  let payloadJson = dataJson;
  let filterLogs: FilterLog[] = [];
  if (input.filterFunction) {
    const outcome = await runFilter(accountId, input.filterFunction, input.filterVersion, dataJson, metadata, helpers);
    if (!outcome.ok)
      return {
        success: false,
        result: null,
        logs: outcome.logs,
        size: 0,
        duration: outcome.durationMs,
        memory: 0,
        memoryLimit: 0,
        error: `The stream's filter failed: ${filterErrorMessage(outcome.error)}`,
        errorKind: outcome.error.kind,
      };
    if (outcome.skipped)
      return {
        success: true,
        result: null,
        logs: [
          ...outcome.logs,
          { level: "INFO" as const, message: "The stream's filter skipped this block, so the function would not run." },
        ],
        size: 0,
        duration: outcome.durationMs,
        memory: 0,
        memoryLimit: 0,
        error: null,
        errorKind: null,
      };
    payloadJson = outcome.resultJson as string;
    filterLogs = outcome.logs;
  }
  const run = await streamsRuntime(services).functions.testRun(
    db,
    accountId,
    input.code,
    { dataJson: payloadJson, metadata },
    { timeoutSec: input.timeoutSec, memoryMb: input.memoryMb },
    helpers,
  );
  return { ...run, logs: [...filterLogs, ...run.logs] };
}

export async function testDestination(
  services: StreamsServices,
  accountId: string,
  attrs: DestinationAttributes,
  ctx: { network?: string; dataset?: string } = {},
): Promise<{ success: boolean; message: string; durationMs: number }> {
  if (ctx.network) catalogueNetwork(ctx.network);
  const unavailable = destinationOptions(services).find((d) => d.value === attrs.type && d.disabled);
  if (unavailable) return { success: false, message: unavailable.reason ?? "", durationMs: 0 };
  let result: TestResult;
  try {
    const destination = createDestination(
      attrs,
      { streamId: "connection-test", accountId, network: ctx.network ?? "", dataset: ctx.dataset ?? "" },
      streamsRuntime(services)?.destinationDeps,
    );
    try {
      result = await destination.test();
    } finally {
      await destination.close();
    }
  } catch (e) {
    result = { ok: false, message: (e as Error).message, durationMs: 0 };
  }
  return { success: result.ok, message: result.message, durationMs: result.durationMs };
}

/** Test a stored stream's destination: its saved secrets are used, never shown. */
export function storedAttributes(box: SecretBox, row: store.StreamRow): DestinationAttributes {
  return destinationAttributesOf(box, row);
}

// ---------------------------------------------------------------- templates

interface TemplateFile {
  id: string;
  title: string;
  description?: string;
  filterFunction: string;
  payload?: unknown;
  datasets?: string[];
  networks?: string[];
  chains?: string[];
}

const templatesFile = path.resolve(import.meta.dirname, "../../../schemas/catalogue/filter-templates.json");

/** Filter templates from the catalogue (schemas/catalogue/filter-templates.json), for one network. */
export function filterTemplates(network: string) {
  if (!existsSync(templatesFile)) return [];
  const raw = JSON.parse(readFileSync(templatesFile, "utf8")) as TemplateFile[] | { templates: TemplateFile[] };
  const list = Array.isArray(raw) ? raw : raw.templates;
  const { chain } = catalogueNetwork(network);
  return list
    .filter((t) => {
      if (t.networks?.length) return t.networks.includes(network);
      if (t.chains?.length) return t.chains.includes(chain.chain) || t.chains.includes(chain.chainCompatibility);
      return true;
    })
    .map((t) => ({
      id: t.id,
      title: t.title,
      description: t.description ?? "",
      filterFunction: t.filterFunction,
      payload: t.payload ?? null,
      datasets: (t.datasets ?? ["BLOCK"]).filter((d) => (EVM_DATASETS as readonly string[]).includes(d)),
    }));
}

/**
 * Ready-made streams: each filter template on each network this service can stream, with the first of
 * the template's datasets that the network's node serves, starting at the chain tip. Derived from the
 * permissions, so a template is offered only where a stream made from it would be accepted.
 */
export async function streamTemplates(services: StreamsServices, planPriceCents: number) {
  const { chainConfigs } = await streamPermissions(services, planPriceCents);
  return chainConfigs.flatMap((chain) =>
    chain.networks
      .filter((network) => !network.disabled && !network.needsUpgrade)
      .flatMap((network) => {
        const served = new Set(network.datasets.filter((d) => !d.disabled).map((d) => d.value));
        return filterTemplates(network.value).flatMap((template) => {
          const dataset = template.datasets.find((d) => served.has(d));
          return dataset
            ? [
                {
                  id: `${template.id}:${network.value}`,
                  network: network.value,
                  dataset,
                  startBlock: null,
                  filterFunction: template.filterFunction,
                },
              ]
            : [];
        });
      }),
  );
}

// ---------------------------------------------------------------- metrics

const LATENCY_QUANTILES = [
  ["p50", 0.5],
  ["p90", 0.9],
  ["p99", 0.99],
] as const;

/** A stream's metrics in its window: totals and rates of the window, and its series per point. */
export function buildMetrics(window: MetricsWindow, rows: store.MetricBucketRow[]) {
  const seconds = Math.max(1, (window.to.getTime() - window.from.getTime()) / 1000);
  const points = bucketSeries(window, rows);
  const sum = (f: (r: store.MetricBucketRow) => number) => rows.reduce((a, r) => a + f(r), 0);
  const count = (f: (r: store.MetricBucketRow) => number) => ({
    datapoints: points.counts(f),
    total: sum(f),
    rate: sum(f) / seconds,
  });
  const filterSketch = rows.reduce((a, r) => a.merge(r.filterSketch), new LatencySketch());
  const latencySketch = rows.reduce((a, r) => a.merge(r.latencySketch), new LatencySketch());
  const runs = sum((r) => r.filterRuns);
  return {
    ...window,
    bytes: {
      billableCumulative: points.cumulative((r) => r.bytesBillable),
      billableTotal: sum((r) => r.bytesBillable),
      datapoints: points.counts((r) => r.bytesTotal),
      total: sum((r) => r.bytesTotal),
      rate: sum((r) => r.bytesTotal) / seconds,
    },
    datasets: count((r) => r.blocks),
    requests: count((r) => r.requests),
    errors: { datapoints: points.counts((r) => r.errors), total: sum((r) => r.errors) },
    retries: { datapoints: points.counts((r) => r.retries), total: sum((r) => r.retries) },
    filter: {
      durationAverage: runs ? sum((r) => r.filterMsTotal) / runs : 0,
      subThresholdTotal: sum((r) => r.filterSubThreshold),
      processedTotal: runs,
      subThresholdTotalCumulative: points.cumulative((r) => r.filterSubThreshold),
      p90: filterSketch.quantile(0.9),
      p99: filterSketch.quantile(0.99),
      // Milliseconds of the point's runs over its runs (not an average of the minutes' averages).
      durationDatapoints: points.sparse((r) => (r.filterRuns > 0 ? r.filterMsTotal / r.filterRuns : null)),
    },
    latency: {
      p50: latencySketch.quantile(0.5),
      p90: latencySketch.quantile(0.9),
      p99: latencySketch.quantile(0.99),
      points: rows
        .filter((r) => r.latencySketch.count > 0)
        .flatMap((r) =>
          LATENCY_QUANTILES.map(([name, q]) => ({
            name,
            timestamp: r.at,
            value: r.latencySketch.quantile(q),
          })),
        ),
    },
  };
}
