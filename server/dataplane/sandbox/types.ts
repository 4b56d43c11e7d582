/**
 * Types of the filter sandbox: what the stream/webhook engine passes in and gets back.
 *
 * Filter versions (the spec's FilterVersion V1–V5). All versions run in the same QuickJS sandbox with
 * the same limits and the same console capture; they differ only in the calling convention:
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

export type FilterErrorKind = "SYNTAX" | "RUNTIME" | "TIMEOUT" | "MEMORY" | "RESULT_NOT_SERIALIZABLE";
export interface FilterError {
  kind: FilterErrorKind;
  message: string;
  /** 1-based line in the user's source, when QuickJS reports one. */
  line?: number;
}

export interface FilterSuccess {
  ok: true;
  /** true when main returned null (or undefined before V5): nothing is delivered. */
  skipped: boolean;
  /** The JSON text of the returned value, null when skipped. */
  resultJson: string | null;
  /** UTF-8 byte length of resultJson (0 when skipped). */
  sizeBytes: number;
  durationMs: number;
  logs: FilterLog[];
}
export interface FilterFailure {
  ok: false;
  error: FilterError;
  durationMs: number;
  logs: FilterLog[];
}
export type FilterOutcome = FilterSuccess | FilterFailure;

export interface FilterLimits {
  /** Wall-clock budget of one call, including awaited helper calls. */
  timeoutMs: number;
  /** Heap limit of the filter's QuickJS runtime (the batch is parsed inside it, so size it for batches). */
  memoryBytes: number;
  /**
   * Stack limit of the QuickJS runtime (deep recursion ends with a MEMORY error). Keep it well under
   * V8's own stack: WASM frames run on it, and a V8 stack overflow inside QuickJS corrupts the runtime.
   */
  stackBytes: number;
  /** At most this many console lines are kept per call; the rest are counted in one closing WARNING. */
  maxLogLines: number;
  /** Each console line is cut to this many characters. */
  maxLogChars: number;
}

export const DEFAULT_FILTER_LIMITS: FilterLimits = {
  timeoutMs: 1_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxLogLines: 200,
  maxLogChars: 4_096,
};

/**
 * The one seam through which filters read (and write) the account's key-value store. The key-value
 * area implements it later; until then no helpers are passed and every `qnLib` call rejects with
 * "key-value store not connected". Names follow the filter API (`qnLib.<name>` inside the filter).
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
