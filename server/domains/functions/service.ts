import { createFilter, filterErrorText, testFilter } from "../../dataplane/sandbox/filter.ts";
import type { FilterLog, FilterMetadata } from "../../dataplane/sandbox/types.ts";
import { runWarm, type WarmKey } from "../../dataplane/sandbox/warm.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { badInput, foundOr } from "../../platform/errors.ts";
import { pageSize } from "../../platform/paging.ts";
import { assertSafeValues } from "../../platform/validation.ts";
import type { ActivationRow, FunctionRow } from "./store.ts";
import * as store from "./store.ts";
import { DEFAULT_FUNCTION_TIMEOUT_SEC } from "./tables.ts";

export type { ActivationRow, FunctionRow } from "./store.ts";

export interface FunctionInput {
  name?: string;
  description?: string | null;
  code?: string;
  timeoutSec?: number;
}

/** What a function is called with: `main(params)` sees `params.data` and `params.metadata`. */
export interface FunctionParams {
  data: unknown;
  metadata?: Record<string, unknown>;
}

/** How a call gives its params: as a JSON value, or as JSON text (typed in the console). */
export interface ParamsInput {
  params?: unknown;
  paramsJson?: string;
}

/**
 * A call's params: an object with data (and metadata) is used as is; any other value is the data.
 * JSON text that does not parse is refused on its field.
 */
export function paramsOf(input: ParamsInput): FunctionParams {
  let params = input.params;
  if (input.paramsJson !== undefined && input.paramsJson !== null) {
    if (params !== undefined && params !== null)
      throw badInput([{ pointer: "/paramsJson", message: "Give params or paramsJson, not both." }]);
    try {
      params = input.paramsJson.trim() === "" ? null : JSON.parse(input.paramsJson);
    } catch (e) {
      throw badInput([{ pointer: "/paramsJson", message: `This is not valid JSON: ${(e as Error).message}` }]);
    }
    assertSafeValues(params, "/paramsJson");
  }
  if (params && typeof params === "object" && !Array.isArray(params) && "data" in params)
    return params as FunctionParams;
  return { data: params ?? null };
}

/** The same, with the data already JSON text (a stream's payload), handed to the sandbox as it is. */
export interface FunctionParamsJson {
  dataJson: string;
  metadata?: Record<string, unknown>;
}

export interface FunctionRun {
  success: boolean;
  /** The JSON text of what main returned; null when it returned null or failed. */
  resultJson: string | null;
  size: number;
  durationMs: number;
  /** The isolate's used heap after the call, in bytes. */
  memoryBytes: number;
  logs: FilterLog[];
  error: string | null;
}

const RESULT_PREVIEW_CHARS = 2000;
/** Runs kept per function (the newest); older ones are pruned every PRUNE_EVERY runs recorded here. */
export const HISTORY_KEPT = 1000;
const PRUNE_EVERY = 50;
const runsSincePrune = new Map<string, number>();

/**
 * Functions run in the filter sandbox (V8 isolates: no host, network or file access) with filter version V4's
 * calling convention, which is a function's: `main(params)` with `params.data` and `params.metadata`,
 * sync or async, and returning nothing is a null result rather than an error.
 */
const FUNCTION_CONVENTION = "V4" as const;

/**
 * Runs function code within `timeoutSec`. One place for how any function code runs. With `warm` (a
 * stored function) the code runs in that function version's warm isolate; without it (a test of
 * unsaved code) in a fresh one.
 */
export async function runCode(
  code: string,
  params: FunctionParams | FunctionParamsJson,
  timeoutSec = DEFAULT_FUNCTION_TIMEOUT_SEC,
  warm?: WarmKey,
): Promise<FunctionRun> {
  const data = "dataJson" in params ? params.dataJson : JSON.stringify(params.data ?? null);
  const options = { source: code, version: FUNCTION_CONVENTION, limits: { timeoutMs: timeoutSec * 1000 } };
  const input = { data, metadata: (params.metadata ?? {}) as FilterMetadata };
  const outcome = await (warm ? runWarm(warm, options, input) : testFilter(options, input));
  if (!outcome.ok)
    return {
      success: false,
      resultJson: null,
      size: 0,
      durationMs: outcome.durationMs,
      memoryBytes: outcome.memoryBytes,
      logs: outcome.logs,
      error: filterErrorText(outcome.error),
    };
  return {
    success: true,
    resultJson: outcome.resultJson,
    size: outcome.sizeBytes,
    durationMs: outcome.durationMs,
    memoryBytes: outcome.memoryBytes,
    logs: outcome.logs,
    error: null,
  };
}

/** What a test run answers (the API's FunctionTestResult): nothing is recorded. */
export function testResult(run: FunctionRun) {
  return {
    success: run.success,
    result: run.resultJson === null ? null : (JSON.parse(run.resultJson) as unknown),
    logs: run.logs,
    size: run.size,
    duration: run.durationMs,
    error: run.error,
  };
}

/** Refuses code that does not compile or has no main (compiled, not run), with the sandbox's message and line. */
export async function checkFunctionCode(code: string, pointer = "/code"): Promise<void> {
  const filter = await createFilter({ source: code, version: FUNCTION_CONVENTION });
  const error = await filter.check();
  filter.dispose();
  if (error)
    throw badInput([
      {
        pointer,
        message: `The code does not compile: ${error.message}${error.line ? ` (line ${error.line})` : ""}`,
      },
    ]);
}

export const listFunctions = (db: Db, accountId: string) => store.listFunctions(db, accountId);

export async function getFunction(db: Executor, accountId: string, id: string): Promise<FunctionRow> {
  return foundOr(await store.getFunction(db, accountId, id), "Function");
}

export type NewFunction = Required<Pick<FunctionInput, "name" | "code">> & FunctionInput;

export async function functionExists(db: Executor, accountId: string, id: string): Promise<boolean> {
  return (await store.getFunction(db, accountId, id)) !== undefined;
}

export async function createFunction(db: Db, accountId: string, input: NewFunction): Promise<FunctionRow> {
  await checkFunctionCode(input.code);
  return insertFunction(db, accountId, input);
}

/** Inserts checked input (see checkFunctionCode); createStreamWithFunction calls it inside its transaction. */
export function insertFunction(db: Executor, accountId: string, input: NewFunction): Promise<FunctionRow> {
  return store.insertFunction(db, accountId, {
    name: input.name,
    description: input.description || null,
    code: input.code,
    timeoutSec: input.timeoutSec,
  });
}

export async function updateFunction(
  db: Db,
  accountId: string,
  id: string,
  patch: FunctionInput,
): Promise<FunctionRow> {
  await getFunction(db, accountId, id);
  if (patch.code !== undefined) await checkFunctionCode(patch.code);
  const row = await store.updateFunction(db, accountId, id, {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.description !== undefined && { description: patch.description || null }),
    ...(patch.code !== undefined && { code: patch.code }),
    ...(patch.timeoutSec !== undefined && { timeoutSec: patch.timeoutSec }),
  });
  return foundOr(row, "Function");
}

/** Streams still delivering to the function keep it: they are named in the refusal. */
export async function deleteFunction(
  db: Db,
  accountId: string,
  id: string,
  streamsUsing: (accountId: string, functionId: string) => Promise<string[]>,
): Promise<{ success: boolean; message: string }> {
  const fn = await getFunction(db, accountId, id);
  const using = await streamsUsing(accountId, id);
  if (using.length > 0)
    throw badInput([
      {
        pointer: "/id",
        message: `Streams deliver to this function: ${using.join(", ")}. Delete them or change their destination first.`,
      },
    ]);
  await store.deleteFunction(db, accountId, id);
  return { success: true, message: `Function "${fn.name}" deleted.` };
}

export interface ActivationSource {
  /** STREAM: a stream delivered a batch; TEST: a destination test; CALL: callFunction. */
  source: "STREAM" | "TEST" | "CALL";
  streamId?: string;
  network?: string;
  dataset?: string;
  blockNumber?: number;
}

/** Runs a stored function and records the activation (its history). */
export async function activate(
  db: Db,
  accountId: string,
  id: string,
  params: FunctionParams | FunctionParamsJson,
  from: ActivationSource,
  maxTimeoutSec?: number,
): Promise<{ activation: ActivationRow; run: FunctionRun }> {
  const fn = await getFunction(db, accountId, id);
  const run = await runCode(fn.code, params, Math.min(fn.timeoutSec, maxTimeoutSec ?? fn.timeoutSec), {
    accountId,
    functionId: fn.id,
  });
  const activation = await store.insertActivation(db, accountId, {
    functionId: fn.id,
    activationSource: from.source,
    streamId: from.streamId ?? null,
    network: from.network ?? null,
    dataset: from.dataset ?? null,
    blockNumber: from.blockNumber ?? null,
    durationMs: run.durationMs,
    success: run.success,
    size: run.size,
    resultPreview: run.resultJson?.slice(0, RESULT_PREVIEW_CHARS) ?? null,
    error: run.error,
    logs: run.logs,
  });
  await pruneHistory(db, fn.id);
  return { activation, run };
}

async function pruneHistory(db: Db, functionId: string): Promise<void> {
  const runs = (runsSincePrune.get(functionId) ?? 0) + 1;
  if (runs < PRUNE_EVERY) {
    runsSincePrune.set(functionId, runs);
    return;
  }
  runsSincePrune.delete(functionId);
  await store.pruneActivations(db, functionId, HISTORY_KEPT);
}

/** The function's newest activations, after checking the account owns it. */
export async function history(
  db: Db,
  accountId: string,
  id: string,
  first: number | null | undefined,
): Promise<ActivationRow[]> {
  await getFunction(db, accountId, id);
  return store.listActivations(db, accountId, id, pageSize(first));
}
