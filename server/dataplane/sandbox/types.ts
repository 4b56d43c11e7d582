/**
 * Types of the filter sandbox: what the stream/webhook engine passes in and gets back.
 *
 * Filter versions (the spec's FilterVersion V1–V5). All versions run in the same sandbox (a V8 isolate
 * in the sandbox process, see process.ts and host.ts) with the same limits and the same console capture; they differ only in the calling convention:
 *
 * | version | main is called as            | async main + `qnLib` helpers | `return undefined`          |
 * | ------- | ---------------------------- | ---------------------------- | --------------------------- |
 * | V1      | `main(data)`                 | no                           | skip (like `null`)          |
 * | V2      | `main(data, metadata)`       | no                           | skip (like `null`)          |
 * | V3      | `main(stream)`               | no                           | skip (like `null`)          |
 * | V4      | `main(stream)`               | yes                          | skip (like `null`)          |
 * | V5      | `main(stream)` (the default) | yes                          | RESULT_NOT_SERIALIZABLE     |
 *
 * `data` / `stream.data` is always the array of dataset items of one batch (one item per block, shaped
 * as the node returns it); `stream.metadata` / `metadata` is {@link FilterMetadata}. Returning `null`
 * skips the batch; any other JSON-serialisable value is delivered. In V1–V3 `qnLib` is not defined and
 * a returned promise is an error ("async main needs filter version V4 or later").
 */
export const FILTER_VERSIONS = ["V1", "V2", "V3", "V4", "V5"] as const;
export type FilterVersion = (typeof FILTER_VERSIONS)[number];
export const DEFAULT_FILTER_VERSION: FilterVersion = "V5";

/** What the engine tells a filter about the batch. Extra keys are passed through unchanged. */
export interface FilterMetadata {
  dataset?: string;
  network?: string;
  batch_start_range?: number;
  batch_end_range?: number;
  start_range?: number;
  end_range?: number | null;
  keep_distance_from_tip?: number;
  stream_id?: string;
  is_reorg?: boolean;
  [key: string]: unknown;
}

export type FilterLogLevel = "INFO" | "WARNING" | "ERROR";
export interface FilterLog {
  level: FilterLogLevel;
  message: string;
}

export type FilterErrorKind =
  | "SYNTAX"
  | "RUNTIME"
  | "TIMEOUT"
  | "MEMORY"
  | "RESULT_NOT_SERIALIZABLE"
  | "RESULT_TOO_LARGE";
export interface FilterError {
  kind: FilterErrorKind;
  message: string;
  /** 1-based line in the user's source, when V8 reports one. */
  line?: number;
  /** 1-based column on that line, when V8 reports one. */
  column?: number;
}

/**
 * Characters of an error's message a call's outcome carries (a log line's): the code chooses what it
 * throws, and a run's error is answered, kept with the run and shown in its history.
 */
export const MAX_ERROR_CHARS = 4_096;

/**
 * An error's text within MAX_ERROR_CHARS, cut as a long log line is; its stack reduced to the place
 * errorPlace reads from it (the stack repeats the message, so cutting it could lose the place).
 */
export function boundedError<E extends { message: string; stack?: string }>(error: E): E {
  const { message, stack } = error;
  const cut =
    message.length > MAX_ERROR_CHARS
      ? `${message.slice(0, MAX_ERROR_CHARS)}… [${message.length - MAX_ERROR_CHARS} more characters]`
      : message;
  if (stack === undefined || stack.length <= MAX_ERROR_CHARS) return { ...error, message: cut };
  return { ...error, message: cut, stack: /filter\.js:\d+(?::\d+)?/.exec(stack)?.[0] ?? "" };
}

/** Where in the user's source V8 placed an error: the first `filter.js:line:column` in its text or stack. */
export function errorPlace(text: string | undefined): { line?: number; column?: number } {
  const m = text ? /filter\.js:(\d+)(?::(\d+))?/.exec(text) : null;
  if (!m) return {};
  return m[2] ? { line: Number(m[1]), column: Number(m[2]) } : { line: Number(m[1]) };
}

export interface FilterSuccess {
  ok: true;
  /** true when main returned null (or undefined before V5): nothing is delivered. */
  skipped: boolean;
  /** The JSON text of the returned value, null when skipped. */
  resultJson: string | null;
  /** UTF-8 byte length of resultJson (0 when skipped). */
  sizeBytes: number;
  /** The call's duration in the sandbox process (from taking the call to answering it). */
  durationMs: number;
  /** The isolate's used heap after the call, in bytes (a function activation's memory; 0 unless measureHeap). */
  memoryBytes: number;
  logs: FilterLog[];
}
export interface FilterFailure {
  ok: false;
  error: FilterError;
  durationMs: number;
  /** The isolate's used heap when the call ended (0 when the isolate was lost). */
  memoryBytes: number;
  logs: FilterLog[];
  /** Set when the sandbox was replaced while the call was in flight (see SandboxLoss). */
  sandboxLost?: SandboxLoss;
}

/**
 * Why a call failed with its sandbox: "culprit", the call made it be replaced (V8 lost control of its
 * isolate, or it ran on past its limit where it could not be stopped); "bystander", another call did and
 * this one was failed with it. A bystander's failure is none of its code's doing: one of another filter
 * than the culprit's that asked for no write helper is run again once in the new sandbox before its
 * caller sees it (Filter.runNow); one that wrote, or was failed again, is not billed, and a stream tries its batch again without spending a retry
 * (see retry.ts). A stream whose filter was the culprit twice pauses (runner.ts).
 */
export type SandboxLoss = "culprit" | "bystander";
export type FilterOutcome = FilterSuccess | FilterFailure;

export interface FilterLimits {
  /** Wall-clock budget of one call, including awaited helper calls. */
  timeoutMs: number;
  /**
   * Heap limit of the filter's isolate, rounded up to whole MiB, at least 8 (the batch is parsed
   * inside it, so size it for batches). V8 treats it as a guideline: a call that allocates far past
   * it in one step can crash the isolate, which the sandbox process contains (see host.ts).
   */
  memoryBytes: number;
  /** At most this many console lines are kept per call; the rest are counted in one closing WARNING. */
  maxLogLines: number;
  /** Each console line is cut to this many characters, with a marker saying how many more it had. */
  maxLogChars: number;
  /**
   * Characters of all of a call's lines together: the line that reaches it is cut (as above) and later
   * ones are dropped, counted in the closing WARNING. 200 full lines were 800 KB per run, kept with each
   * of a function's last 1,000 runs.
   */
  maxLogCharsPerCall: number;
  /**
   * UTF-8 bytes of JSON a call may return (0: no limit, filters). The sandbox process refuses a larger
   * result before it leaves the isolate's answer, so it never crosses the pipe (see host.ts).
   */
  maxResultBytes: number;
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = {
  timeoutMs: 1_000,
  memoryBytes: 64 * 1024 * 1024,
  maxLogLines: 200,
  maxLogChars: 4_096,
  maxLogCharsPerCall: 65_536,
  maxResultBytes: 0,
};

/**
 * The largest result a function run may return (AWS Lambda's response payload limit). A larger one fails
 * the run with RESULT_TOO_LARGE in the sandbox process, before it is sent: each copy of it (through the
 * pipe, parsed for the answer, written out again) costs its size again, and a 1 GB function could return
 * hundreds of MB (200 MB took the service from 257 to 944 MB).
 */
export const MAX_FUNCTION_RESULT_BYTES = 6 * 1024 * 1024;

/**
 * The refusal of a result past `limitBytes`. `atLeast`: its size was counted in UTF-16 code units (inside
 * the isolate, where a result that long is refused without being copied out), which UTF-8 bytes are never fewer than.
 */
export function resultTooLarge(sizeBytes: number, limitBytes: number, atLeast: boolean): FilterError {
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "");
  const size = `${atLeast ? "at least " : ""}${(sizeBytes / 1024 / 1024).toFixed(1)} MiB`;
  return {
    kind: "RESULT_TOO_LARGE",
    message: `main returned ${size} of JSON; a result is at most ${mib(limitBytes)} MiB.`,
  };
}

/**
 * The one seam through which filters and functions read (and write) the account's key-value store.
 * Without helpers every `qnLib` call rejects with "key-value store not connected". Names follow the
 * filter API (`qnLib.<name>` inside the filter), except itemsSnapshot, which user code never calls.
 * Arguments arrive already type-checked (keys are strings, items string arrays); results must be
 * JSON-serialisable. Lists hold strings; "sets" are single key → value pairs; address books are lists
 * of addresses.
 */
export interface FilterHelpers {
  qnGetList(key: string): Promise<string[]>;
  qnContainsListItems(key: string, items: string[]): Promise<boolean[]>;
  qnGetAllLists(): Promise<string[]>;
  qnAddListItem(key: string, item: string): Promise<boolean>;
  qnRemoveListItem(key: string, item: string): Promise<boolean>;
  qnUpsertList(key: string, options: { add_items?: string[]; remove_items?: string[] }): Promise<boolean>;
  qnDeleteList(key: string): Promise<boolean>;
  qnGetSet(key: string): Promise<string | null>;
  qnAddSet(key: string, value: string): Promise<boolean>;
  qnBulkSets(options: { add_sets?: Record<string, string>; delete_sets?: string[] }): Promise<boolean>;
  qnDeleteSet(key: string): Promise<boolean>;
  qnGetAllSets(): Promise<string[]>;
  qnGetAddressBook(key: string): Promise<string[]>;
  qnContainsAddressBookItems(key: string, addresses: string[]): Promise<boolean[]>;
  /**
   * The items of a list or address book with a version that changes on every write of that key;
   * items is null when knownVersion is still current. With it, qnContainsListItems and
   * qnContainsAddressBookItems answer from a Set kept inside the isolate, asking only for the version
   * once per call of main (see bootstrap.ts). (A partial set of helpers without it, as tests pass,
   * has those two answered by the methods above.)
   */
  itemsSnapshot(key: string, knownVersion: number | null): Promise<{ version: number; items: string[] | null }>;
}

export const FILTER_HELPER_NAMES = [
  "qnGetList",
  "qnContainsListItems",
  "qnGetAllLists",
  "qnAddListItem",
  "qnRemoveListItem",
  "qnUpsertList",
  "qnDeleteList",
  "qnGetSet",
  "qnAddSet",
  "qnBulkSets",
  "qnDeleteSet",
  "qnGetAllSets",
  "qnGetAddressBook",
  "qnContainsAddressBookItems",
] as const satisfies readonly (keyof FilterHelpers)[];
export type FilterHelperName = (typeof FILTER_HELPER_NAMES)[number];
/**
 * The helpers that change the key-value store: the only effect user code can have outside its isolate
 * (it has no network, files or timers), so a call that asked for none of them can be run again as if it
 * never ran (see Filter.runNow).
 */
export const FILTER_WRITE_HELPERS: ReadonlySet<string> = new Set<FilterHelperName>([
  "qnAddListItem",
  "qnRemoveListItem",
  "qnUpsertList",
  "qnDeleteList",
  "qnAddSet",
  "qnBulkSets",
  "qnDeleteSet",
]);
