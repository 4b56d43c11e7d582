import { readFileSync } from "node:fs";
import path from "node:path";
import { filterSandbox, type HostOutcome, type SandboxHost, SandboxRestarted } from "./process.ts";
import {
  DEFAULT_FILTER_LIMITS,
  DEFAULT_FILTER_VERSION,
  errorPlace,
  type FilterError,
  type FilterErrorKind,
  type FilterHelpers,
  type FilterLimits,
  type FilterLog,
  type FilterMetadata,
  type FilterOutcome,
  type FilterVersion,
  resultTooLarge,
  type SandboxLoss,
} from "./types.ts";

/**
 * User filter code (`function main(stream)`) and function code, in a V8 isolate (isolates.ts): in the
 * sandbox process (process.ts, host.ts), or on this thread when this process runs nothing else that
 * must keep answering (the stream engine's own process, see runFiltersOn). Never on the thread that
 * serves GraphQL or the RPC proxy, so a runaway loop, a memory bomb or a crash of V8 costs the caller an
 * error, not the service.
 *
 * - One isolate per {@link Filter}: filters never share globals or a heap, and each has its own
 *   memory limit. The isolate is reused across calls, so globals a filter sets survive between its
 *   own calls, like a warm function instance. Any failure drops the isolate; the next call loads the
 *   code into a fresh one, so a crashed, interrupted or exhausted isolate is never reused.
 * - The guest has only the ECMAScript built-ins (less SharedArrayBuffer, Atomics, WebAssembly,
 *   FinalizationRegistry and WeakRef),
 *   `console` (captured, see bootstrap.ts) and, from V4, `qnLib`. There is no fetch, require,
 *   process, module loader, timers or other host object.
 */

export interface FilterOptions {
  source: string;
  version?: FilterVersion;
  /** The key-value store seam; without it every qnLib call rejects with "key-value store not connected". */
  helpers?: FilterHelpers;
  limits?: Partial<FilterLimits>;
  /**
   * Functions: in the sandbox process even where filters run on the calling thread (see runFiltersOn),
   * so a long time limit never blocks the caller's event loop.
   */
  offThread?: boolean;
  /**
   * Whose filter this is (a stream's id): a host whose thread a filter can hold names it by this when
   * it must end (see in-thread.ts), so its successor knows which filter not to run there again.
   */
  label?: string;
  /**
   * The account whose code this is (null: no account's, as in tests): an account whose code crashes a
   * sandbox process shared with other accounts has its code run in the quarantine process for a while
   * (see quarantine in process.ts).
   */
  owner: string | null;
  /**
   * Whether outcomes report the isolate's used heap (memoryBytes; a function run's memory). Default
   * true; the stream engine, which does not use it, saves its ~3 µs a call.
   */
  measureHeap?: boolean;
}

export interface FilterInput {
  /**
   * The batch: an array of dataset items, or its JSON text when the caller already has it. When main
   * returns the batch untouched, the result is this text as given (or the JSON of the array).
   */
  data: unknown[] | string;
  /** UTF-8 byte length of `data` when it is text and the caller has counted it (not counted again). */
  dataBytes?: number;
  metadata?: FilterMetadata;
}

const MIB = 1024 * 1024;
const activationSchemaFile = path.resolve(
  import.meta.dirname,
  "../../../schemas/entities/function-activation.schema.json",
);

/** A call sent before its turn (see sendAhead): the batch's text, how it was sent, and the outcome, or its promise. */
interface Ahead {
  dataJson: string;
  parsed: boolean;
  outcome: HostOutcome | Promise<HostOutcome>;
}
/** Below this, a batch is always sent with the call: copying it costs less than asking for it. */
const KEEP_MIN_CHARS = 4 * 1024;
/**
 * After PARSED_AFTER_READS calls in a row whose batches were handed in lazily read them, the next
 * PARSED_RUNS calls have theirs parsed before main (see the run frame); then one is lazy again, to see
 * whether the filter still reads its batches. A filter that reads only now and then stays lazy.
 */
const PARSED_AFTER_READS = 4;
const PARSED_RUNS = 64;

/** The error as callers compare it: no `line` key when there is no line. */
function filterError(e: FilterError): FilterError {
  return e.line === undefined || e.line === null ? { kind: e.kind, message: e.message } : e;
}

export class Filter {
  readonly version: FilterVersion;
  private readonly limits: FilterLimits;
  /** The sandbox for this filter's time limit and owner (see filterSandbox), chosen again at each load. */
  private sandbox: SandboxHost;
  private fid: number;
  /** The sandbox process generation the code is loaded in; -1 when it is not loaded. */
  private loadedIn = -1;
  private queue: Promise<unknown> = Promise.resolve();
  /** Calls taken by run() that have not finished. */
  private inFlight = 0;
  /** Of those, the ones not sent to the sandbox process yet (waiting for their turn or for a load). */
  private unsent = 0;
  /**
   * Whether the last call read its batch. While calls do not, batches stay in this process until
   * read (see SandboxProcess.run): a filter deciding on metadata, or passing the batch through, never
   * has them copied; one that reads them has them sent with the call.
   */
  private readsBatch = true;
  /** Calls in a row, of those whose batch was handed in lazily, that read it. */
  private lazyReads = 0;
  /** Calls still to send with their batch parsed before main (see PARSED_RUNS). */
  private parsedRuns = 0;
  private disposed = false;
  /**
   * Calls of this filter that crashed its sandbox. A call made before one of them was known does not run
   * after it (it would likely crash the next sandbox too): it fails as a bystander, as a call sent behind
   * the crashing one does, whichever sandbox runs the filter.
   */
  private crashes = 0;

  constructor(
    private readonly source: string,
    version: FilterVersion,
    private readonly helpers: FilterHelpers | undefined,
    limits: FilterLimits,
    private readonly owner: string | null,
    private readonly offThread = false,
    private readonly measureHeap = true,
    private readonly label?: string,
  ) {
    this.version = version;
    this.limits = limits;
    this.sandbox = filterSandbox(limits.timeoutMs, offThread, owner);
    this.fid = this.sandbox.newId();
  }

  /**
   * Compiles the source and runs its top level in a fresh isolate; the SYNTAX (or load) error, or
   * null. Rejects only when the sandbox process failed meanwhile (not the code's fault: try again).
   */
  check(): Promise<FilterError | null> {
    const next = this.queue.then(async () => (await this.load())?.error ?? null);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs main on one batch. Calls on one Filter run one at a time, in the order they were made (an
   * isolate runs one call at a time); a call is sent at once when it can be (see sendAhead). On the
   * engine's thread a call usually ends while it is sent: with no call before it, its outcome is decoded
   * at once instead of in a turn of the queue (a chain of promises per call, measurable on small blocks).
   */
  run(input: FilterInput): Promise<FilterOutcome> {
    const idle = this.inFlight === 0;
    const started = performance.now();
    const ahead = this.sendAhead(input);
    if (idle && ahead && !(ahead.outcome instanceof Promise) && !ahead.outcome.unloaded)
      return Promise.resolve(this.decode(ahead.outcome, input, ahead.dataJson, ahead.parsed, started));
    if (!ahead) this.unsent++;
    this.inFlight++;
    const crashesBefore = this.crashes;
    const next = this.queue.then(() => this.runNow(input, ahead, crashesBefore)).finally(() => this.inFlight--);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Sends a call without waiting for the answers to the calls before it, when they are all sent and
   * the code is loaded: the sandbox process runs them in the order they arrive, so a caller with
   * several batches at hand (the stream engine in backfill, see runner.ts) has them run back to back,
   * their answers sharing this process's wake-ups, instead of one round trip per call. A call sent
   * after one that fails finds the filter unloaded (its isolate is dropped after any failure) and is
   * sent again, in its turn, once the code is loaded again. (Fast process only: the slow one runs
   * several calls at once.)
   */
  private sendAhead(input: FilterInput): Ahead | null {
    if (this.disposed || this.unsent > 0 || this.loadedIn !== this.sandbox.generation || !this.sandbox.keepsBatches)
      return null;
    const dataJson = typeof input.data === "string" ? input.data : JSON.stringify(input.data);
    // A batch the filter may not read is kept here instead, sent in its turn (see keeps).
    if (this.keeps(dataJson)) return null;
    const metaJson = JSON.stringify(input.metadata ?? {});
    const parsed = this.parsesAhead();
    return {
      dataJson,
      parsed,
      outcome: this.sandbox.run(this.fid, metaJson, dataJson, this.limits.timeoutMs, this.helpers, false, parsed),
    };
  }

  /** Whether the next call's batch is parsed before main (see PARSED_RUNS); counts it. */
  private parsesAhead(): boolean {
    if (this.parsedRuns === 0) return false;
    this.parsedRuns--;
    return true;
  }

  dispose(): void {
    this.disposed = true;
    this.unload();
  }

  private unload(): void {
    if (this.loadedIn === this.sandbox.generation) this.sandbox.close(this.fid);
    this.loadedIn = -1;
  }

  /** Loads the code unless it is loaded; its error, and whether loading it crashed the sandbox. */
  private async load(): Promise<{ error: FilterError; lost?: SandboxLoss } | null> {
    if (this.loadedIn === this.sandbox.generation) return null;
    // Not loaded (first use, a failure, a replaced sandbox): where it runs may have changed since (its
    // owner's code crashed a sandbox and is quarantined, or the quarantine ended).
    const chosen = filterSandbox(this.limits.timeoutMs, this.offThread, this.owner);
    if (chosen !== this.sandbox) {
      this.sandbox.close(this.fid);
      this.sandbox = chosen;
      this.fid = chosen.newId();
    }
    const sandbox = this.sandbox;
    const { error, generation, lost } = await sandbox.open(
      this.fid,
      {
        version: Number(this.version.slice(1)),
        timeoutMs: this.limits.timeoutMs,
        memoryMiB: Math.max(8, Math.ceil(this.limits.memoryBytes / MIB)),
        maxLogLines: this.limits.maxLogLines,
        maxLogChars: this.limits.maxLogChars,
        maxLogCharsPerCall: this.limits.maxLogCharsPerCall,
        snapshots: typeof this.helpers?.itemsSnapshot === "function",
        heap: this.measureHeap,
        maxResultBytes: this.limits.maxResultBytes,
      },
      this.source,
      { label: this.label, owner: this.owner },
    );
    if (error) return lost ? { error: filterError(error), lost } : { error: filterError(error) };
    this.loadedIn = generation;
    return null;
  }

  private async runNow(input: FilterInput, ahead: Ahead | null, crashesBefore: number): Promise<FilterOutcome> {
    const started = performance.now();
    const logs: FilterLog[] = [];
    // A call failed with a sandbox another filter's call crashed, before it asked for any write, changed
    // nothing outside its isolate: it runs again, once, in the new sandbox (later calls wait their turn).
    let mayRunAgain = true;
    const runsAgain = (outcome: HostOutcome) => mayRunAgain && outcome.runAgain === true;
    if (ahead) {
      const outcome = await ahead.outcome;
      if (!outcome.unloaded && !runsAgain(outcome))
        return this.decode(outcome, input, ahead.dataJson, ahead.parsed, started);
      // Sent ahead behind a call that failed (or lost with it): sent again below, and until then later calls wait.
      if (!outcome.unloaded) mayRunAgain = false;
      this.unsent++;
    }
    let sent = false;
    const markSent = () => {
      if (!sent) this.unsent--;
      sent = true;
    };
    try {
      if (this.disposed) {
        return {
          ok: false,
          error: { kind: "RUNTIME", message: "filter was disposed" },
          durationMs: 0,
          memoryBytes: 0,
          logs,
        };
      }
      if (this.crashes !== crashesBefore) {
        return {
          ok: false,
          error: { kind: "RUNTIME", message: "an earlier call of this filter crashed the sandbox; retry it" },
          durationMs: 0,
          memoryBytes: 0,
          logs,
          sandboxLost: "bystander",
        };
      }
      const dataJson = typeof input.data === "string" ? input.data : JSON.stringify(input.data);
      let parsed = false;
      for (;;) {
        let outcome: HostOutcome;
        try {
          const loadFailure = await this.load();
          if (loadFailure) {
            const { error, lost } = loadFailure;
            if (lost === "culprit") this.crashes++;
            const durationMs = performance.now() - started;
            return { ok: false, error, durationMs, memoryBytes: 0, logs, ...(lost && { sandboxLost: lost }) };
          }
          const metaJson = JSON.stringify(input.metadata ?? {});
          const keep = this.keeps(dataJson);
          parsed = !keep && this.parsesAhead();
          const running = this.sandbox.run(
            this.fid,
            metaJson,
            dataJson,
            this.limits.timeoutMs,
            this.helpers,
            keep,
            parsed,
          );
          markSent();
          outcome = await running;
        } catch (e) {
          // Loading it was failed by another's crash.
          if (!(e instanceof SandboxRestarted)) throw e;
          if (mayRunAgain) {
            mayRunAgain = false;
            continue;
          }
          return {
            ok: false,
            error: { kind: "RUNTIME", message: e.message },
            durationMs: performance.now() - started,
            memoryBytes: 0,
            logs,
            sandboxLost: "bystander",
          };
        }
        if (!runsAgain(outcome)) return this.decode(outcome, input, dataJson, parsed, started);
        mayRunAgain = false;
        this.unsent++;
        sent = false;
      }
    } finally {
      markSent();
    }
  }

  /** Whether this batch stays in this process until the filter reads it (see SandboxProcess.run). */
  private keeps(dataJson: string): boolean {
    return (
      !this.readsBatch &&
      this.sandbox.keepsBatches &&
      dataJson.length >= KEEP_MIN_CHARS &&
      dataJson.charCodeAt(0) === 0x5b
    );
  }

  /** The outcome of a call as callers see it (`parsed`: its batch was parsed before main). */
  private decode(
    outcome: HostOutcome,
    input: FilterInput,
    dataJson: string,
    parsed: boolean,
    started: number,
  ): FilterOutcome {
    // The call's own duration as the sandbox process measured it (what a function is billed for and a
    // stream's filter time counts); the caller's wall clock also counts waits for its own event loop.
    const durationMs = outcome.durationMs ?? performance.now() - started;
    const memoryBytes = outcome.heapBytes;
    // A leading "R": the call read a batch (see bootstrap.ts).
    this.readsBatch = outcome.error !== null || outcome.body[0] === "R";
    // Batches handed in lazily and read, call after call: the next calls' are parsed before main.
    if (!parsed && outcome.error === null) {
      this.lazyReads = outcome.body[0] === "R" ? this.lazyReads + 1 : 0;
      if (this.lazyReads >= PARSED_AFTER_READS) this.parsedRuns = PARSED_RUNS;
    }
    const body = outcome.body[0] === "R" ? outcome.body.slice(1) : outcome.body;
    if (outcome.error) {
      this.loadedIn = -1;
      const { lost, logs } = outcome;
      if (lost === "culprit") this.crashes++;
      return {
        ok: false,
        error: filterError(outcome.error),
        durationMs,
        memoryBytes,
        logs,
        ...(lost && { sandboxLost: lost }),
      };
    }
    const tag = body[0];
    if (tag === "S")
      return { ok: true, skipped: true, resultJson: null, sizeBytes: 0, durationMs, memoryBytes, logs: outcome.logs };
    if (tag === "V" || tag === "P" || tag === "Q") {
      // P and Q: main returned the batch (or the stream object) without reading it; the guest never
      // parsed it, and its JSON is the text passed in.
      const resultJson =
        tag === "V" ? body.slice(1) : tag === "P" ? dataJson : `{"data":${dataJson},"metadata":${body.slice(1)}}`;
      const sizeBytes =
        tag === "P" && input.dataBytes !== undefined && resultJson === input.data
          ? input.dataBytes
          : Buffer.byteLength(resultJson);
      // A result built here from the batch (P, Q) never crossed the pipe; the sandbox process checked the others.
      const limit = this.limits.maxResultBytes;
      if (tag !== "V" && limit > 0 && sizeBytes > limit)
        return {
          ok: false,
          error: resultTooLarge(sizeBytes, limit, false),
          durationMs,
          memoryBytes,
          logs: outcome.logs,
        };
      return { ok: true, skipped: false, resultJson, sizeBytes, durationMs, memoryBytes, logs: outcome.logs };
    }
    const err = JSON.parse(body.slice(1)) as { kind: FilterError["kind"]; message: string; stack: string };
    // A thrown error may leave the user's globals half-updated: the next call starts from a fresh isolate.
    this.unload();
    return {
      ok: false,
      error: { kind: err.kind, message: err.message, ...errorPlace(err.stack) },
      durationMs,
      memoryBytes,
      logs: outcome.logs,
    };
  }
}

/** A filter error's message and place, without its kind (which results carry as `errorKind`): `message (line N, column M)`. */
export function filterErrorMessage(error: FilterError): string {
  const column = error.column ? `, column ${error.column}` : "";
  return `${error.message}${error.line ? ` (line ${error.line}${column})` : ""}`;
}

let kindLabels: Record<string, string> | undefined;

/** A filter error's kind in words: the label its entity schema declares (the console shows the same). */
export function filterErrorKindLabel(kind: FilterErrorKind): string {
  kindLabels ??= (
    JSON.parse(readFileSync(activationSchemaFile, "utf8")) as {
      properties: { errorKind: { "x-enumLabels": Record<string, string> } };
    }
  ).properties.errorKind["x-enumLabels"];
  return kindLabels[kind] ?? kind;
}

/** A filter error as one line of a sentence: `Runtime error: message (line N, column M)`. */
export function filterErrorText(error: FilterError): string {
  return `${filterErrorKindLabel(error.kind)}: ${filterErrorMessage(error)}`;
}

/** Creates a filter. Its code is loaded into an isolate on the first run or check(). */
export function newFilter(options: FilterOptions): Filter {
  return new Filter(
    options.source,
    options.version ?? DEFAULT_FILTER_VERSION,
    options.helpers,
    { ...DEFAULT_FILTER_LIMITS, ...options.limits },
    options.owner,
    options.offThread,
    options.measureHeap,
    options.label,
  );
}

/** The same, for callers written when loading the engine was asynchronous. */
export async function createFilter(options: FilterOptions): Promise<Filter> {
  return newFilter(options);
}

/** One-shot run for "test filter function": loads, runs once on the input, disposes. */
export async function testFilter(options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
  const filter = await createFilter(options);
  try {
    return await filter.run(input);
  } finally {
    filter.dispose();
  }
}
