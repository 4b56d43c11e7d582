import { createFilter, filterErrorKindLabel, filterErrorMessage, testFilter } from "../../dataplane/sandbox/filter.ts";
import {
  DEFAULT_FILTER_LIMITS,
  type FilterError,
  type FilterErrorKind,
  type FilterHelpers,
  type FilterLog,
  type FilterMetadata,
  MAX_FUNCTION_RESULT_BYTES,
  type SandboxLoss,
} from "../../dataplane/sandbox/types.ts";
import { runWarm } from "../../dataplane/sandbox/warm.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { AppError, badInput, foundOr } from "../../platform/errors.ts";
import { connection, cursorArgument, pageSize } from "../../platform/paging.ts";
import { storableText } from "../../platform/text.ts";
import { bucketSeries, metricsWindow } from "../../platform/time-buckets.ts";
import { assertSafeValues } from "../../platform/validation.ts";
import { catalogueNetwork } from "../catalogue/networks.ts";
import { billedMbMs, checkRunAllowance, gbSecondsOf } from "./billing.ts";
import {
  checkFunctionCount,
  checkMemorySize,
  checkTimeout,
  fallbackFunctionLimits,
  functionLimitsOf,
  PLAN_FUNCTION_LIMITS,
  type PlanFunctionLimits,
  RunCapacity,
} from "./limits.ts";
import type { ActivationRow, FunctionRow, UsageBucketRow } from "./store.ts";
import * as store from "./store.ts";
import { DEFAULT_FUNCTION_MEMORY_MB, DEFAULT_FUNCTION_TIMEOUT_SEC } from "./tables.ts";

export type { ActivationRow, FunctionRow, FunctionVersionRow, LogLineRow } from "./store.ts";

/** MB of heap a run used, rounded up (what the history shows beside the MB it had). */
export const usedMb = (bytes: number) => Math.ceil(bytes / (1024 * 1024));

export interface FunctionInput {
  name?: string;
  description?: string | null;
  code?: string;
  timeoutSec?: number;
  memoryMb?: number;
}

/** What `main(params)` is given: the batch's data and metadata (a stream's, or a block's), and the caller's user_data. */
export interface FunctionParams {
  data?: unknown;
  metadata?: Record<string, unknown>;
  user_data?: unknown;
}

/** How a call gives its params and user data: as JSON values, or as JSON text (typed in the console). */
export interface ParamsInput {
  params?: unknown;
  paramsJson?: string;
  userData?: unknown;
  userDataJson?: string;
}

function jsonField(value: unknown, text: string | undefined | null, field: string, textField: string): unknown {
  if (text === undefined || text === null) return value;
  if (value !== undefined && value !== null)
    throw badInput([{ pointer: `/${textField}`, message: `Give ${field} or ${textField}, not both.` }]);
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? null : JSON.parse(text);
  } catch (e) {
    throw badInput([{ pointer: `/${textField}`, message: `This is not valid JSON: ${(e as Error).message}` }]);
  }
  assertSafeValues(parsed, `/${textField}`);
  return parsed;
}

/**
 * A call's params: an object with data (and metadata) is used as is; any other value is the data. The
 * user data, given on its own, is params.user_data. JSON text that does not parse is refused on its field.
 */
export function paramsOf(input: ParamsInput): FunctionParams {
  const params = jsonField(input.params, input.paramsJson, "params", "paramsJson");
  const userData = jsonField(input.userData, input.userDataJson, "userData", "userDataJson");
  const base: FunctionParams =
    params && typeof params === "object" && !Array.isArray(params) && "data" in params
      ? (params as FunctionParams)
      : { data: params ?? null };
  return userData === undefined || userData === null ? base : { ...base, user_data: userData };
}

/**
 * The block a call reads params.data and params.metadata from: network, dataset and blockNumber together,
 * or none of them. A network not in the catalogue is named first; an incomplete block on what was given.
 */
export function callBlock(input: {
  network?: string;
  dataset?: string;
  blockNumber?: number;
}): { network: string; dataset: string; blockNumber: number } | null {
  const { network, dataset, blockNumber } = input;
  if (network !== undefined) catalogueNetwork(network);
  if (network !== undefined && dataset !== undefined && blockNumber !== undefined)
    return { network, dataset, blockNumber };
  const given = (["network", "dataset", "blockNumber"] as const).filter((k) => input[k] !== undefined);
  if (given.length > 0)
    throw badInput(
      given.map((k) => ({ pointer: `/${k}`, message: "Give network, dataset and blockNumber together, or none." })),
    );
  return null;
}

/** The same, with the data already JSON text (a stream's payload), handed to the sandbox as it is. */
export interface FunctionParamsJson {
  dataJson: string;
  metadata?: Record<string, unknown>;
  user_data?: unknown;
}

export interface FunctionLimits {
  timeoutSec?: number;
  memoryMb?: number;
  /** Why the run's time limit is less than the function's (see runLimitsOf): said in a WARNING line of its logs. */
  timeoutCapped?: string;
}

export interface FunctionRun {
  success: boolean;
  /** The JSON text of what main returned; null when it returned null or failed. */
  resultJson: string | null;
  size: number;
  durationMs: number;
  /**
   * The run's time limit: what it is billed at most. A call V8 could not stop runs on until the sandbox's
   * watchdog replaces the process (GRACE_MS later): its duration shows that, its bill does not.
   */
  timeoutMs: number;
  /** MB the run had: its configured memory (the isolate's heap limit), what it is billed for. */
  memoryMb: number;
  /** The isolate's used heap after the call, in bytes. */
  memoryBytes: number;
  logs: FilterLog[];
  /** Why it failed: its message and place in the code, without its kind (errorKind). */
  error: string | null;
  errorKind: FilterErrorKind | null;
  /** Set when the run failed with its sandbox (see SandboxLoss): a bystander's run is not billed. */
  sandboxLost?: SandboxLoss;
}

const RESULT_PREVIEW_CHARS = 2000;
/** A run's whole result is kept (for functionActivationResult) up to this many bytes; bigger ones only as a preview. */
export const RESULT_KEPT_BYTES = 256 * 1024;
/**
 * Runs kept per function (the newest), and the bytes the newest may hold as stored (results, user data,
 * logs): older runs keep only their outcome and preview (store.pruneActivations), every PRUNE_EVERY runs
 * recorded here. Without the bytes, a run kept 256 KiB of user data and 256 KiB of result, and a function
 * 1,000 runs: a Free account's ten functions held 5 GB, written at 18 MB/s by one caller, for GB-seconds
 * that cost it nothing (a 1 ms run of 128 MB is 0.000125).
 */
export const HISTORY_KEPT = { runs: 1000, bytes: 16 * 1024 * 1024 };
const PRUNE_EVERY = 50;
/**
 * Versions kept per function, the newest (Cloudflare Workers lists a script's last 100): each holds up to
 * 100 KB of code, and functionVersions answers them all. Keeping every one, a Free account's updates kept
 * 4.6 MB a second (46 a second) and 300 of them made a 30 MB answer.
 */
export const VERSIONS_KEPT = 100;

/**
 * What the function runs of one process share: the runtime's capacity, the key-value store they reach
 * as `qnLib` (the process's, so its whole reads go one at a time), and the runs each function recorded
 * since its history was last pruned. One per process that runs functions, made at composition (app.ts,
 * engine.ts) and handed to every path that starts a run: the API, a function's HTTP address, FUNCTION
 * destinations.
 */
export class FunctionRuns {
  readonly capacity = new RunCapacity();
  private readonly sincePrune = new Map<string, number>();

  constructor(readonly helpers: (accountId: string) => FilterHelpers) {}

  /** Counts a recorded run of the function: true every PRUNE_EVERY runs, when its history is to be pruned. */
  countRun(functionId: string): boolean {
    const runs = (this.sincePrune.get(functionId) ?? 0) + 1;
    if (runs < PRUNE_EVERY) {
      this.sincePrune.set(functionId, runs);
      return false;
    }
    this.sincePrune.delete(functionId);
    return true;
  }
}

/**
 * Functions run in the filter sandbox (V8 isolates: no host, network or file access) with filter version
 * V4's calling convention: `main(stream)` sync or async, and returning nothing is a null result rather
 * than an error.
 */
const FUNCTION_CONVENTION = "V4" as const;
/** Where the host puts params.user_data in the metadata it hands the sandbox; the wrapper takes it out. */
const USER_DATA_KEY = "nodeplane_user_data";

/** The start of the wrapper around a function's code (see wrappedSource). */
const PROLOGUE =
  "var main = (function (userMain) {" +
  ' if (typeof userMain !== "function") throw new Error("The code defines no function main(params).");' +
  " return function (stream) {" +
  ` var metadata = stream.metadata, params = { data: stream.data, metadata: metadata, user_data: null };` +
  ` if (metadata && Object.prototype.hasOwnProperty.call(metadata, "${USER_DATA_KEY}")) {` +
  ` params.user_data = metadata["${USER_DATA_KEY}"]; var rest = {};` +
  ` for (var k in metadata) if (k !== "${USER_DATA_KEY}") rest[k] = metadata[k]; params.metadata = rest; }` +
  " return userMain(params); };" +
  "})((function () {";

/**
 * The sandbox calls `main(stream)` with a batch's data and metadata; a function's main gets params with
 * user_data beside them. The user's code runs in a function scope that starts on its first line (so
 * errors keep their line numbers), and the global main the sandbox calls builds the params.
 */
function wrappedSource(code: string): string {
  return `${PROLOGUE}${code}\n;return typeof main === "function" ? main : undefined;\n})());\n`;
}

/**
 * An error as the function's author reads it: its place in their code (on the first line, columns come
 * after the wrapper's prologue; a place inside the prologue, such as "no function main", is none of
 * theirs and is dropped), and the sandbox's limits said of the function rather than of a filter. A
 * syntax error the parser met only in the wrapper's epilogue means the code ended unfinished (an
 * unclosed bracket): it is said so, on the code's last line, not as the epilogue's token.
 */
function inUserCode(error: FilterError, code: string): FilterError {
  const message =
    error.kind === "TIMEOUT" || error.kind === "MEMORY"
      ? error.message.replace(/^filter /, "the function ")
      : error.message;
  const lines = code.split("\n").length;
  if (error.kind === "SYNTAX" && error.line !== undefined && error.line > lines)
    return { kind: error.kind, message: "SyntaxError: Unexpected end of input", line: lines };
  if (error.line !== 1 || error.column === undefined) return { ...error, message };
  if (error.column <= PROLOGUE.length) return { kind: error.kind, message };
  return { ...error, message, column: error.column - PROLOGUE.length };
}

// Without storableText a run that logged or threw a NUL could not be recorded: neither in the history nor
// billed, and a stream delivering to it could not even be marked failed.

const storableLogs = (logs: FilterLog[]) =>
  logs.map((log) => ({ level: log.level, message: storableText(log.message) }));

/**
 * Runs the account's function code within its limits. One place for how any function code runs. With
 * `functionId` (a stored function) the code runs in that function version's warm isolate; without it (a
 * test of unsaved code) in a fresh one.
 */
export async function runCode(
  code: string,
  params: FunctionParams | FunctionParamsJson,
  limits: FunctionLimits,
  { accountId, functionId }: { accountId: string; functionId?: string },
  helpers?: FilterHelpers,
): Promise<FunctionRun> {
  const timeoutSec = limits.timeoutSec ?? DEFAULT_FUNCTION_TIMEOUT_SEC;
  const memoryMb = limits.memoryMb ?? DEFAULT_FUNCTION_MEMORY_MB;
  const data = "dataJson" in params ? params.dataJson : JSON.stringify(params.data ?? null);
  const metadata: FilterMetadata = { ...(params.metadata ?? {}) };
  if (params.user_data !== undefined && params.user_data !== null) metadata[USER_DATA_KEY] = params.user_data;
  const options = {
    source: wrappedSource(code),
    version: FUNCTION_CONVENTION,
    limits: {
      timeoutMs: timeoutSec * 1000,
      memoryBytes: memoryMb * 1024 * 1024,
      maxResultBytes: MAX_FUNCTION_RESULT_BYTES,
    },
    helpers,
    offThread: true,
    label: functionId ? `function ${functionId}` : "function test",
    owner: accountId,
  };
  const input = { data, metadata };
  const outcome = await (functionId ? runWarm({ accountId, functionId }, options, input) : testFilter(options, input));
  const capped: FilterLog[] = limits.timeoutCapped ? [{ level: "WARNING", message: limits.timeoutCapped }] : [];
  const ran = {
    durationMs: outcome.durationMs,
    timeoutMs: timeoutSec * 1000,
    memoryMb,
    memoryBytes: outcome.memoryBytes,
    logs: [...capped, ...storableLogs(outcome.logs)],
  };
  if (!outcome.ok) {
    const error = inUserCode(outcome.error, code);
    const run: FunctionRun = {
      ...ran,
      success: false,
      resultJson: null,
      size: 0,
      error: storableText(filterErrorMessage(error)),
      errorKind: error.kind,
    };
    return outcome.sandboxLost ? { ...run, sandboxLost: outcome.sandboxLost } : run;
  }
  return {
    ...ran,
    success: true,
    resultJson: outcome.resultJson,
    size: outcome.sizeBytes,
    error: null,
    errorKind: null,
  };
}

/** What a test run answers (the API's FunctionTestResult): billed (runUnsavedCode), not kept in any history. */
export function testResult(run: FunctionRun) {
  return {
    success: run.success,
    result: run.resultJson === null ? null : (JSON.parse(run.resultJson) as unknown),
    logs: run.logs,
    size: run.size,
    duration: run.durationMs,
    memory: usedMb(run.memoryBytes),
    memoryLimit: run.memoryMb,
    error: run.error,
    errorKind: run.errorKind,
  };
}

/** A failed run's error in words, kind first (`Runtime error: …`), for a log line or a stream's log. */
export function runErrorText(run: Pick<FunctionRun, "error" | "errorKind">): string | null {
  if (!run.error) return null;
  return run.errorKind ? `${filterErrorKindLabel(run.errorKind)}: ${run.error}` : run.error;
}

/** Refuses code that does not compile or has no main (loaded, main not called), with the sandbox's message and line. */
export async function checkFunctionCode(accountId: string, code: string, pointer = "/code"): Promise<void> {
  const filter = await createFilter({ source: wrappedSource(code), version: FUNCTION_CONVENTION, owner: accountId });
  const found = await filter.check();
  filter.dispose();
  if (found) {
    const error = inUserCode(found, code);
    const column = error.column ? `, column ${error.column}` : "";
    throw badInput([
      {
        pointer,
        message: `${error.kind === "SYNTAX" ? "The code does not compile" : "The code fails as it loads"}: ${error.message}${error.line ? ` (line ${error.line}${column})` : ""}`,
      },
    ]);
  }
}

export const listFunctions = (db: Db, accountId: string) => store.listFunctions(db, accountId);

/** The functions overview: newest first, `limit` at a time. */
export async function functionsPage(db: Db, accountId: string, args: { limit?: number | null; after?: string | null }) {
  const size = pageSize(args.limit, { argument: "limit" });
  const page = await store.listFunctionsPage(db, accountId, {
    limit: size + 1,
    after: cursorArgument(args.after, store.createdCursorShape),
  });
  return { ...connection(page.rows, size, store.createdCursorOf), totalCount: page.totalCount };
}

export async function getFunction(db: Executor, accountId: string, id: string): Promise<FunctionRow> {
  return foundOr(await store.getFunction(db, accountId, id), "Function");
}

export type NewFunction = Required<Pick<FunctionInput, "name" | "code">> & FunctionInput;

/** The names of the account's functions among `ids`, by id (a streams destination shows its function's name). */
export const functionNames = (db: Executor, accountId: string, ids: string[]) =>
  store.functionNames(db, accountId, ids);

export async function functionExists(db: Executor, accountId: string, id: string): Promise<boolean> {
  return (await store.getFunction(db, accountId, id)) !== undefined;
}

export async function createFunction(db: Db, accountId: string, input: NewFunction): Promise<FunctionRow> {
  await checkFunctionCode(accountId, input.code);
  return db.transaction((tx) => insertFunction(tx, accountId, input));
}

/**
 * Inserts checked input (see checkFunctionCode) as version 1, within the plan's functions; run it in a
 * transaction (createStreamWithFunction calls it inside its own).
 */
export async function insertFunction(
  db: Executor,
  accountId: string,
  input: NewFunction,
  memoryPointer = "/memoryMb",
): Promise<FunctionRow> {
  await store.lockAccountFunctions(db, accountId);
  const limits = await functionLimitsOf(db, accountId);
  checkMemorySize(limits, input.memoryMb, memoryPointer);
  checkTimeout(limits, input.timeoutSec, memoryPointer.replace(/memoryMb$/, "timeoutSec"));
  checkFunctionCount(limits, (await store.countFunctions(db, accountId)) + 1);
  return store.insertFunction(db, accountId, {
    name: input.name,
    description: input.description || null,
    code: input.code,
    timeoutSec: input.timeoutSec,
    memoryMb: input.memoryMb,
  });
}

/**
 * Changes a function. A change of its code, timeout or memory is a new version (runs name the version
 * they ran); a new name or description is not. Its memory may change only to a size the plan allows;
 * given unchanged (a form sends every field), a size a downgrade left past the plan is kept, so the
 * function can still be renamed or its code changed (its runs are held to the plan, see runLimitsOf).
 */
export async function updateFunction(
  db: Db,
  accountId: string,
  id: string,
  patch: FunctionInput,
): Promise<FunctionRow> {
  const current = await getFunction(db, accountId, id);
  if (patch.memoryMb !== undefined && patch.memoryMb !== current.memoryMb)
    checkMemorySize(await functionLimitsOf(db, accountId), patch.memoryMb, "/memoryMb");
  if (patch.timeoutSec !== undefined && patch.timeoutSec !== current.timeoutSec)
    checkTimeout(await functionLimitsOf(db, accountId), patch.timeoutSec, "/timeoutSec");
  if (patch.code !== undefined) await checkFunctionCode(accountId, patch.code);
  const newVersion =
    (patch.code !== undefined && patch.code !== current.code) ||
    (patch.timeoutSec !== undefined && patch.timeoutSec !== current.timeoutSec) ||
    (patch.memoryMb !== undefined && patch.memoryMb !== current.memoryMb);
  const row = await db.transaction(async (tx) => {
    const updated = await store.updateFunction(
      tx,
      accountId,
      id,
      {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.description !== undefined && { description: patch.description || null }),
        ...(patch.code !== undefined && { code: patch.code }),
        ...(patch.timeoutSec !== undefined && { timeoutSec: patch.timeoutSec }),
        ...(patch.memoryMb !== undefined && { memoryMb: patch.memoryMb }),
      },
      newVersion,
    );
    if (updated && newVersion) await store.pruneVersions(tx, updated.id, updated.version - VERSIONS_KEPT);
    return updated;
  });
  return foundOr(row, "Function");
}

/** Every version of a function, newest first. */
export async function versions(db: Db, accountId: string, id: string) {
  await getFunction(db, accountId, id);
  return store.listVersions(db, accountId, id);
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

/**
 * Runs code not saved as a function (a console test): refused like any run once a plan's included
 * GB-seconds are used, and billed like one (a test may run for a minute with a gigabyte), to the account.
 */
export async function runUnsavedCode(
  db: Db,
  runs: FunctionRuns,
  accountId: string,
  code: string,
  params: FunctionParams | FunctionParamsJson,
  limits: FunctionLimits,
  helpers?: FilterHelpers,
): Promise<FunctionRun> {
  const plan = await checkRunAllowance(db, accountId);
  checkMemorySize(plan, limits.memoryMb, "/memoryMb");
  checkTimeout(plan, limits.timeoutSec, "/timeoutSec");
  const release = await runs.capacity.admit(accountId, plan, limits.memoryMb ?? DEFAULT_FUNCTION_MEMORY_MB);
  const run = await runCode(code, params, limits, { accountId }, helpers).finally(release);
  await store.addRunUsage(db, accountId, accountId, new Date(), {
    durationMs: run.durationMs,
    size: run.size,
    success: run.success,
    mbMs: billedMbMs(run),
  });
  return run;
}

export const ACTIVATION_SOURCES = ["RPC", "STREAM", "TEST", "CALL"] as const;

export interface ActivationSource {
  /** RPC: its HTTP address; STREAM: a stream delivered a batch; TEST: a destination test; CALL: callFunction. */
  source: (typeof ACTIVATION_SOURCES)[number];
  streamId?: string;
  network?: string;
  dataset?: string;
  blockNumber?: number;
}

/**
 * What a stored function's run has: its timeout at most the plan's longest and the caller's (a stream's
 * postTimeoutSec), and its memory at most the plan's largest. A function set larger before a downgrade is
 * not refused (a stream delivering to it would start failing for a setting, most runs use far less) nor
 * kept at its size (the plan would not hold the sandbox's memory): it runs with the plan's largest and is
 * billed for that; a run needing more fails with MEMORY like any run past its limit, and its history
 * shows the limit it had. A time limit held below the function's is said in the run's logs.
 */
function runLimitsOf(fn: FunctionRow, plan: PlanFunctionLimits, maxTimeoutSec: number | undefined): FunctionLimits {
  const caller = maxTimeoutSec ?? fn.timeoutSec;
  const timeoutSec = Math.min(fn.timeoutSec, plan.maxTimeoutSec, caller);
  const why =
    timeoutSec === plan.maxTimeoutSec && plan.maxTimeoutSec < fn.timeoutSec
      ? `its plan allows at most ${plan.maxTimeoutSec} s`
      : `its caller waits at most ${caller} s (a stream's postTimeoutSec)`;
  return {
    timeoutSec,
    memoryMb: Math.min(fn.memoryMb, plan.maxMemoryMb),
    ...(timeoutSec < fn.timeoutSec && {
      timeoutCapped: `This run's time limit is ${timeoutSec} s, not the function's ${fn.timeoutSec} s: ${why}.`,
    }),
  };
}

/** Runs a stored function's current version, records the run (its history) and bills it (its usage row). */
export async function activate(
  db: Db,
  runs: FunctionRuns,
  accountId: string,
  id: string,
  params: FunctionParams | FunctionParamsJson,
  from: ActivationSource,
  maxTimeoutSec?: number,
): Promise<{ activation: ActivationRow; run: FunctionRun }> {
  const fn = await getFunction(db, accountId, id);
  const plan = await checkRunAllowance(db, accountId);
  const limits = runLimitsOf(fn, plan, maxTimeoutSec);
  const release = await runs.capacity.admit(accountId, plan, limits.memoryMb ?? DEFAULT_FUNCTION_MEMORY_MB);
  const run = await runCode(fn.code, params, limits, { accountId, functionId: fn.id }, runs.helpers(accountId)).finally(
    release,
  );
  const mbMs = billedMbMs(run);
  const keepResult = run.resultJson !== null && run.size <= RESULT_KEPT_BYTES;
  const activation = await db.transaction(async (tx) => {
    // Deleted while it ran: the run is billed all the same (usage rows outlive a function; else deleting a
    // function just before its runs ended ran code for free), and its caller told why nothing was kept.
    if (!(await store.holdFunction(tx, accountId, fn.id))) {
      await store.addRunUsage(tx, accountId, fn.id, new Date(), {
        durationMs: run.durationMs,
        size: run.size,
        success: run.success,
        mbMs,
      });
      return undefined;
    }
    return store.insertActivation(
      tx,
      accountId,
      {
        functionId: fn.id,
        activationSource: from.source,
        version: fn.version,
        streamId: from.streamId ?? null,
        network: from.network ?? null,
        dataset: from.dataset ?? null,
        blockNumber: from.blockNumber ?? null,
        durationMs: run.durationMs,
        memoryMb: run.memoryMb,
        memoryUsedBytes: run.memoryBytes,
        billableGbSeconds: gbSecondsOf(mbMs),
        success: run.success,
        size: run.size,
        userData: params.user_data ?? null,
        resultPreview: run.resultJson?.slice(0, RESULT_PREVIEW_CHARS) ?? null,
        resultJson: keepResult ? run.resultJson : null,
        error: run.error,
        errorKind: run.errorKind,
        logs: loggedLines(run),
      },
      { mbMs },
    );
  });
  if (!activation)
    throw new AppError(
      "NOT_FOUND",
      "The function was deleted while this call ran: the run was billed, and kept in no history.",
    );
  if (runs.countRun(fn.id)) await store.pruneActivations(db, fn.id, HISTORY_KEPT);
  return { activation, run };
}

/**
 * The lines a recorded run keeps in the function's logs: its console lines and, for a run that failed,
 * its error as the last ERROR line, so the Logs tab (and its Error filter) shows why runs fail, as the
 * error output of a Lambda or a QuickNode function does.
 */
function loggedLines(run: FunctionRun): FilterLog[] {
  const error = runErrorText(run);
  return run.success || !error ? run.logs : [...run.logs, { level: "ERROR", message: error }];
}

/** The function's runs, newest first, after checking the account owns it. */
export async function history(
  db: Db,
  accountId: string,
  id: string,
  args: { first?: number | null; after?: string | null },
) {
  const after = cursorArgument(args.after, store.createdCursorShape);
  const size = pageSize(args.first);
  await getFunction(db, accountId, id);
  const rows = await store.listActivations(db, accountId, id, { limit: size + 1, after });
  return connection(rows, size, store.createdCursorOf);
}

export async function getActivation(db: Db, accountId: string, id: string): Promise<ActivationRow> {
  return foundOr(await store.getActivation(db, accountId, id), "Function activation");
}

/** A run's whole result, when it was kept; a bigger one is answered as missing with its size. */
export async function activationResult(db: Db, accountId: string, id: string) {
  const row = await getActivation(db, accountId, id);
  const kept = row.resultJson !== null || row.size === 0;
  return {
    id: row.id,
    success: row.success,
    size: row.size,
    kept,
    result: row.resultJson === null ? null : (JSON.parse(row.resultJson) as unknown),
    error: row.error,
    errorKind: row.errorKind,
  };
}

export const LOG_LEVELS = ["INFO", "WARNING", "ERROR"] as const;

/** The account's functions against its plan's limits (the functions overview shows them). */
export async function functionsPlan(db: Db, accountId: string) {
  const [limits, functions] = await Promise.all([functionLimitsOf(db, accountId), store.countFunctions(db, accountId)]);
  return {
    functions,
    functionLimit: limits.functions,
    logRetentionDays: limits.logRetentionDays,
    // Functions run with the sandbox's log bounds (runCode sets no others).
    logLinesPerRun: DEFAULT_FILTER_LIMITS.maxLogLines,
    logCharsPerRun: DEFAULT_FILTER_LIMITS.maxLogCharsPerCall,
    includedGbSeconds: limits.gbSecondsPerPeriod,
    maxMemoryMb: limits.maxMemoryMb,
    runningMemoryMb: limits.runningMemoryMb,
  };
}

/**
 * Empties the console lines of runs older than their account's plan keeps them (the runs stay in the
 * history); the service's housekeeping calls it. Returns the runs emptied.
 */
export function pruneRunLogs(db: Db, now = new Date()): Promise<number> {
  const retention = Object.entries(PLAN_FUNCTION_LIMITS).map(([planId, limits]) => ({
    planId,
    days: limits.logRetentionDays,
  }));
  return store.pruneRunLogs(db, retention, fallbackFunctionLimits.logRetentionDays, now);
}

/** The function's console lines, newest first, with level and text filters. */
export async function logs(
  db: Db,
  accountId: string,
  id: string,
  args: { first?: number | null; after?: string | null; levels?: readonly string[] | null; searchText?: string | null },
) {
  const after = cursorArgument(args.after, store.logCursorShape);
  const size = pageSize(args.first, { fallback: 50 });
  await getFunction(db, accountId, id);
  const rows = await store.listLogLines(db, accountId, id, {
    limit: size + 1,
    after,
    levels: args.levels,
    searchText: args.searchText,
  });
  return connection(rows, size, (r) => [r.createdAt, r.activationId, r.line]);
}

/** A function's metrics cover at most this many days (of a longer range, its last days). */
const METRICS_MAX_DAYS = 31;

/**
 * A function's metrics in a window of at most 31 days: executions, errors, duration, response size and
 * GB-seconds per point, the point's width (its step) chosen from the window's length.
 */
export async function metrics(db: Db, accountId: string, id: string, startDate: Date, endDate?: Date | null) {
  await getFunction(db, accountId, id);
  const window = metricsWindow(startDate, endDate, { maxDays: METRICS_MAX_DAYS });
  const rows = await store.usageBuckets(db, accountId, id, window);
  const points = bucketSeries(window, rows);
  const measure = (value: (r: UsageBucketRow) => number) => ({
    datapoints: points.counts(value),
    cumulative: points.cumulative(value),
    total: rows.reduce((a, r) => a + value(r), 0),
  });
  const execution = measure((r) => r.executions);
  const durationTotal = rows.reduce((a, r) => a + r.durationMs, 0);
  return {
    ...window,
    execution,
    error: measure((r) => r.errors),
    size: measure((r) => r.responseBytes),
    usage: measure((r) => gbSecondsOf(r.mbMs)),
    duration: {
      // Milliseconds of the point's runs over its runs (not an average of the minutes' averages).
      datapoints: points.sparse((r) => (r.executions ? r.durationMs / r.executions : null)),
      cumulative: points.cumulative((r) => r.durationMs),
      total: durationTotal,
      average: execution.total ? durationTotal / execution.total : 0,
    },
  };
}

/** The account's function usage in [start, end): GB-seconds, runs and errors per hour or day. */
export async function billingUsage(db: Db, accountId: string, start: Date, end: Date, tick: "hour" | "day") {
  if (end.getTime() <= start.getTime())
    throw badInput([{ pointer: "/end", message: "The end of the period must be after its start." }]);
  const rows = await store.accountUsage(db, accountId, start, end, tick);
  const ticks = rows.map((r) => ({
    timestamp: r.at,
    gbSeconds: gbSecondsOf(r.mbMs),
    executions: r.executions,
    errors: r.errors,
  }));
  return {
    start,
    end,
    gbSeconds: gbSecondsOf(rows.reduce((a, r) => a + r.mbMs, 0)),
    executions: rows.reduce((a, r) => a + r.executions, 0),
    errors: rows.reduce((a, r) => a + r.errors, 0),
    ticks,
  };
}

/** The spec's languages: only Node.js runs here; the others are listed as coming soon, never run. */
export const LANGUAGES = [
  { value: "NODEJS", label: "Node.js", comingSoon: false },
  { value: "PYTHON", label: "Python", comingSoon: true },
  { value: "GO", label: "Go", comingSoon: true },
  { value: "JAVA", label: "Java", comingSoon: true },
  { value: "DOTNET", label: ".NET", comingSoon: true },
  { value: "PHP", label: "PHP", comingSoon: true },
  { value: "RUBY", label: "Ruby", comingSoon: true },
  { value: "SWIFT", label: "Swift", comingSoon: true },
] as const;

export function languageOptions() {
  return LANGUAGES.map((l) => ({ ...l, disabled: l.comingSoon }));
}
