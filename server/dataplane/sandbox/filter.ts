import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten";
import { BOOTSTRAP_SOURCE } from "./bootstrap.ts";
import {
  DEFAULT_FILTER_LIMITS,
  DEFAULT_FILTER_VERSION,
  FILTER_HELPER_NAMES,
  type FilterError,
  type FilterErrorKind,
  type FilterHelperName,
  type FilterHelpers,
  type FilterLimits,
  type FilterLog,
  type FilterLogLevel,
  type FilterMetadata,
  type FilterOutcome,
  type FilterVersion,
} from "./types.ts";

/**
 * User filter code (`function main(stream)`) in a QuickJS sandbox.
 *
 * - One QuickJS runtime + context per {@link Filter}: filters never share globals or a heap, and each
 *   has its own memory and stack limits. The context is reused across calls (~µs per call instead of
 *   ~0.3 ms to build one), so globals a filter sets survive between its own calls, like a warm
 *   function instance. Any failure disposes the context; the next call builds a fresh one, so a
 *   crashed, interrupted or exhausted context is never reused.
 * - The guest has only the ECMAScript built-ins, `console` (captured, see bootstrap.ts) and, from V4,
 *   `qnLib`. There is no fetch, require, process, module loader, timers or other host object.
 * - Async main: helper calls return guest promises that the host settles when the helper's host
 *   promise settles; the host drives the guest's job queue (executePendingJobs) in between, so the
 *   synchronous WASM build is enough.
 */

const FILENAME = "filter.js";
let modulePromise: Promise<QuickJSWASMModule> | undefined;

/** The WASM module is loaded once per process and shared by every filter's runtime. */
function loadModule(): Promise<QuickJSWASMModule> {
  modulePromise ??= newQuickJSWASMModule();
  return modulePromise;
}

export interface FilterOptions {
  source: string;
  version?: FilterVersion;
  /** The key-value store seam; without it every qnLib call rejects with "key-value store not connected". */
  helpers?: FilterHelpers;
  limits?: Partial<FilterLimits>;
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

class SandboxFault extends Error {
  constructor(readonly filterError: FilterError) {
    super(filterError.message);
  }
}

interface Instance {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  run: QuickJSHandle;
}

type HelperArg = "string" | "strings" | "object";
const HELPER_ARGS: Record<FilterHelperName, HelperArg[]> = {
  qnGetList: ["string"],
  qnContainsListItems: ["string", "strings"],
  qnGetAllLists: [],
  qnAddListItem: ["string", "string"],
  qnRemoveListItem: ["string", "string"],
  qnUpsertList: ["string", "object"],
  qnDeleteList: ["string"],
  qnGetSet: ["string"],
  qnAddSet: ["string", "string"],
  qnBulkSets: ["object"],
  qnDeleteSet: ["string"],
  qnGetAllSets: [],
  qnGetAddressBook: ["string"],
  qnContainsAddressBookItems: ["string", "strings"],
};

function checkHelperArgs(name: FilterHelperName, args: unknown[]): void {
  const expected = HELPER_ARGS[name];
  if (args.length < expected.length) {
    throw new TypeError(`qnLib.${name} expects ${expected.length} argument(s), got ${args.length}`);
  }
  expected.forEach((kind, i) => {
    const v = args[i];
    const ok =
      kind === "string"
        ? typeof v === "string"
        : kind === "strings"
          ? Array.isArray(v) && v.every((x) => typeof x === "string")
          : v !== null && typeof v === "object" && !Array.isArray(v);
    if (!ok) {
      const what = kind === "strings" ? "an array of strings" : kind === "string" ? "a string" : "an object";
      throw new TypeError(`qnLib.${name}: argument ${i + 1} must be ${what}`);
    }
  });
}

function lineOf(stack: string | undefined): number | undefined {
  const m = stack ? new RegExp(`${FILENAME.replace(".", "\\.")}:(\\d+)`).exec(stack) : null;
  return m ? Number(m[1]) : undefined;
}

const LEVELS = new Set<FilterLogLevel>(["INFO", "WARNING", "ERROR"]);

/**
 * The parts of a QuickJSContext that `newString` uses, which TypeScript marks protected.
 * `context.newString` encodes UTF-8 in a JavaScript loop (emscripten's stringToUTF8): ~5 ms per MiB,
 * more than the rest of a call on a mainnet-sized batch. Encoding with Buffer (native) and copying the
 * bytes into the WASM heap does the same in a fraction of that. Checked at run time; if a later
 * quickjs-emscripten renames them, the public (slower) newString is used.
 */
interface ContextInternals {
  module: { _malloc(bytes: number): number; _free(ptr: number): void; HEAPU8: Uint8Array };
  ffi: { QTS_NewString(ctx: unknown, ptr: number): number };
  ctx: { value: unknown };
  memory: { heapValueHandle(ptr: number): QuickJSHandle };
}

function internalsOf(context: QuickJSContext): ContextInternals | null {
  const c = context as unknown as Partial<ContextInternals>;
  return typeof c.module?._malloc === "function" &&
    typeof c.module._free === "function" &&
    c.module.HEAPU8 instanceof Uint8Array &&
    typeof c.ffi?.QTS_NewString === "function" &&
    c.ctx !== undefined &&
    typeof c.memory?.heapValueHandle === "function"
    ? (c as ContextInternals)
    : null;
}

/**
 * context.newString with a native UTF-8 encoder. Text with lone surrogates (never JSON.stringify's
 * output) has them replaced by U+FFFD here; newString would pass them through.
 */
export function newStringFast(context: QuickJSContext, text: string): QuickJSHandle {
  const c = internalsOf(context);
  if (!c) return context.newString(text);
  const bytes = Buffer.from(text, "utf8");
  const ptr = c.module._malloc(bytes.length + 1);
  if (!ptr) throw new Error("out of memory: could not allocate the batch in the sandbox");
  try {
    // HEAPU8 is read after _malloc: growing the WASM memory replaces it.
    const heap = c.module.HEAPU8;
    heap.set(bytes, ptr);
    heap[ptr + bytes.length] = 0;
    return c.memory.heapValueHandle(c.ffi.QTS_NewString(c.ctx.value, ptr));
  } finally {
    c.module._free(ptr);
  }
}

export class Filter {
  readonly version: FilterVersion;
  private readonly limits: FilterLimits;
  private instance: Instance | undefined;
  private deadline = 0;
  private interrupted = false;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;
  /** The batch text of the call in progress, handed to the guest by hostData. */
  private callData: string | null = null;
  /** Guest promises handed out for helper calls of the current call, with their host-side settlement. */
  private pending = new Set<{ deferred: QuickJSDeferredPromise; settled: Promise<void> }>();

  constructor(
    private readonly module: QuickJSWASMModule,
    private readonly source: string,
    version: FilterVersion,
    private readonly helpers: FilterHelpers | undefined,
    limits: FilterLimits,
  ) {
    this.version = version;
    this.limits = limits;
  }

  /** Compiles the source in a fresh context; returns the SYNTAX (or load) error, or null. */
  check(): FilterError | null {
    try {
      this.ensureInstance();
      return null;
    } catch (e) {
      return this.toFilterError(e);
    }
  }

  /** Runs main on one batch. Calls on one Filter are serialised (a QuickJS context is single-threaded). */
  run(input: FilterInput): Promise<FilterOutcome> {
    const next = this.queue.then(() => this.runNow(input));
    this.queue = next.catch(() => undefined);
    return next;
  }

  dispose(): void {
    this.disposed = true;
    this.teardown();
  }

  private async runNow(input: FilterInput): Promise<FilterOutcome> {
    const started = performance.now();
    const logs: FilterLog[] = [];
    if (this.disposed) {
      return { ok: false, error: { kind: "RUNTIME", message: "filter was disposed" }, durationMs: 0, logs };
    }
    try {
      const inst = this.ensureInstance();
      const dataJson = typeof input.data === "string" ? input.data : JSON.stringify(input.data);
      const metaJson = JSON.stringify(input.metadata ?? {});
      this.deadline = Date.now() + this.limits.timeoutMs;
      this.interrupted = false;
      // A synchronous main's result is taken without an await, so the duration holds no other work.
      const called = this.call(inst, dataJson, metaJson);
      const encoded = typeof called === "string" ? called : await called;
      const durationMs = performance.now() - started;
      const body = this.splitLogs(encoded, logs);
      const tag = body[0];
      if (tag === "S") return { ok: true, skipped: true, resultJson: null, sizeBytes: 0, durationMs, logs };
      if (tag === "V" || tag === "P" || tag === "Q") {
        // P and Q: main returned the batch (or the stream object) without reading it; the guest never
        // parsed it, and its JSON is the text passed in.
        const resultJson =
          tag === "V" ? body.slice(1) : tag === "P" ? dataJson : `{"data":${dataJson},"metadata":${body.slice(1)}}`;
        const sizeBytes =
          tag === "P" && input.dataBytes !== undefined && resultJson === input.data
            ? input.dataBytes
            : Buffer.byteLength(resultJson);
        return { ok: true, skipped: false, resultJson, sizeBytes, durationMs, logs };
      }
      const err = JSON.parse(body.slice(1)) as { kind: FilterErrorKind; message: string; stack: string };
      // A thrown error may leave the user's globals half-updated: start the next call from a clean context.
      this.teardown();
      return { ok: false, error: { kind: err.kind, message: err.message, line: lineOf(err.stack) }, durationMs, logs };
    } catch (e) {
      this.teardown();
      return { ok: false, error: this.toFilterError(e), durationMs: performance.now() - started, logs };
    }
  }

  private splitLogs(encoded: string, into: FilterLog[]): string {
    if (encoded[0] !== "L") return encoded;
    const colon = encoded.indexOf(":");
    const len = Number(encoded.slice(1, colon));
    const lines = JSON.parse(encoded.slice(colon + 1, colon + 1 + len)) as [FilterLogLevel, string][];
    for (const [level, message] of lines) into.push({ level: LEVELS.has(level) ? level : "INFO", message });
    return encoded.slice(colon + 1 + len);
  }

  /** Calls main; its encoded result, or a promise of it when main returned a promise. */
  private call(inst: Instance, dataJson: string, metaJson: string): string | Promise<string> {
    const { context } = inst;
    // An array (every batch the engine sends) is fetched by the guest when first used (hostData).
    const lazy = dataJson.charCodeAt(0) === 0x5b;
    const dataH = lazy ? context.null : context.newString(dataJson);
    const metaH = context.newString(metaJson);
    this.callData = lazy ? dataJson : null;
    let res: ReturnType<QuickJSContext["callFunction"]>;
    try {
      res = context.callFunction(inst.run, context.undefined, dataH, metaH);
    } catch (e) {
      this.callData = null;
      throw e;
    } finally {
      dataH.dispose();
      metaH.dispose();
    }
    if (res.error) {
      this.callData = null;
      throw this.guestFault(context, res.error);
    }
    const handle = res.value;
    if (context.typeof(handle) === "string") {
      try {
        return context.getString(handle);
      } finally {
        this.callData = null;
        handle.dispose();
      }
    }
    return this.settleAsync(inst, handle);
  }

  /** Drives the guest's jobs and helper calls until main's promise settles, within the time limit. */
  private async settleAsync(inst: Instance, handle: QuickJSHandle): Promise<string> {
    const { context, runtime } = inst;
    try {
      for (;;) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) throw this.guestFault(context, jobs.error);
        const state = context.getPromiseState(handle);
        if (state.type === "fulfilled") {
          const s = context.getString(state.value);
          state.value.dispose();
          return s;
        }
        if (state.type === "rejected") throw this.guestFault(context, state.error);
        if (this.pending.size === 0) {
          throw new SandboxFault({
            kind: "RUNTIME",
            message: "main's promise never settled: it awaits something that is never resolved",
          });
        }
        const remaining = this.deadline - Date.now();
        if (remaining <= 0) throw this.timeoutFault();
        let timer: NodeJS.Timeout | undefined;
        const expired = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), remaining);
        });
        const first = await Promise.race([...[...this.pending].map((p) => p.settled), expired]);
        clearTimeout(timer);
        if (first === "timeout") throw this.timeoutFault();
      }
    } finally {
      this.callData = null;
      if (handle.alive) handle.dispose();
    }
  }

  /** Guest → host: the current call's batch text (the guest asks once, on first use of the batch). */
  private hostData(context: QuickJSContext): QuickJSHandle {
    if (this.callData === null) throw new Error("the batch is only available during the call");
    return newStringFast(context, this.callData);
  }

  private timeoutFault(): SandboxFault {
    return new SandboxFault({
      kind: "TIMEOUT",
      message: `filter ran longer than its time limit of ${this.limits.timeoutMs} ms`,
    });
  }

  /** Classifies an error value thrown out of the guest, and disposes its handle. */
  private guestFault(context: QuickJSContext, errorHandle: QuickJSHandle): SandboxFault {
    let dumped: unknown;
    try {
      dumped = context.dump(errorHandle);
    } catch {
      dumped = undefined;
    } finally {
      errorHandle.dispose();
    }
    const d = (dumped && typeof dumped === "object" ? dumped : {}) as {
      name?: string;
      message?: string;
      stack?: string;
    };
    const message = d.message ?? String(dumped);
    if (this.interrupted || message === "interrupted") return this.timeoutFault();
    if (message === "out of memory") {
      return new SandboxFault({
        kind: "MEMORY",
        message: `filter exceeded its memory limit of ${Math.round(this.limits.memoryBytes / 1024 / 1024)} MiB`,
      });
    }
    if (message === "string too long") {
      return new SandboxFault({ kind: "MEMORY", message: `filter exceeded a size limit: ${message}` });
    }
    if (message === "stack overflow" || message === "Maximum call stack size exceeded") {
      return new SandboxFault({
        kind: "MEMORY",
        message: `filter exceeded its stack limit of ${Math.round(this.limits.stackBytes / 1024)} KiB (too deep recursion)`,
      });
    }
    const kind: FilterErrorKind = d.name === "SyntaxError" ? "SYNTAX" : "RUNTIME";
    return new SandboxFault({ kind, message: `${d.name ?? "Error"}: ${message}`, line: lineOf(d.stack) });
  }

  private toFilterError(e: unknown): FilterError {
    if (e instanceof SandboxFault) return e.filterError;
    const message = e instanceof Error ? e.message : String(e);
    if (/Maximum call stack size exceeded/.test(message)) {
      return { kind: "MEMORY", message: `filter exceeded the stack limit (too deep recursion)` };
    }
    // The WASM allocator itself can fail while the host copies a batch into a nearly full heap.
    if (/out of memory|memory access out of bounds|allocat/i.test(message)) {
      return { kind: "MEMORY", message: `filter exceeded its memory limit: ${message}` };
    }
    return { kind: "RUNTIME", message: `sandbox error: ${message}` };
  }

  private ensureInstance(): Instance {
    if (this.instance) return this.instance;
    const runtime = this.module.newRuntime();
    runtime.setMemoryLimit(this.limits.memoryBytes);
    runtime.setMaxStackSize(this.limits.stackBytes);
    runtime.setInterruptHandler(() => {
      if (Date.now() > this.deadline) {
        this.interrupted = true;
        return true;
      }
      return false;
    });
    const context = runtime.newContext();
    const owned: QuickJSHandle[] = [];
    try {
      // Compilation and top-level code get the same time budget as one call.
      this.deadline = Date.now() + this.limits.timeoutMs;
      this.interrupted = false;
      const versionNumber = Number(this.version.slice(1));
      const hostCall = context.newFunction("hostCall", (nameH, argsH) => this.hostCall(context, nameH, argsH));
      owned.push(hostCall);
      const hostData = context.newFunction("hostData", () => this.hostData(context));
      owned.push(hostData);
      const names = context.newArray();
      owned.push(names);
      FILTER_HELPER_NAMES.forEach((name, i) => {
        const h = context.newString(name);
        context.setProp(names, i, h);
        h.dispose();
      });
      const bootRes = context.evalCode(BOOTSTRAP_SOURCE, "bootstrap.js");
      if (bootRes.error) throw this.guestFault(context, bootRes.error);
      owned.push(bootRes.value);
      const args = [
        hostCall,
        hostData,
        names,
        context.newNumber(versionNumber),
        context.newNumber(this.limits.maxLogLines),
        context.newNumber(this.limits.maxLogChars),
      ];
      owned.push(...args.slice(3));
      const bindRes = context.callFunction(bootRes.value, context.undefined, ...args);
      if (bindRes.error) throw this.guestFault(context, bindRes.error);
      owned.push(bindRes.value);

      const userRes = context.evalCode(this.source, FILENAME);
      if (userRes.error) throw this.guestFault(context, userRes.error);
      userRes.value.dispose();
      const mainRes = context.evalCode("typeof main === 'function' ? main : undefined", "lookup.js");
      if (mainRes.error) throw this.guestFault(context, mainRes.error);
      owned.push(mainRes.value);
      if (context.typeof(mainRes.value) !== "function") {
        throw new SandboxFault({ kind: "SYNTAX", message: "the filter must define function main(stream)" });
      }
      const runRes = context.callFunction(bindRes.value, context.undefined, mainRes.value);
      if (runRes.error) throw this.guestFault(context, runRes.error);
      for (const h of owned) h.dispose();
      this.instance = { runtime, context, run: runRes.value };
      return this.instance;
    } catch (e) {
      for (const h of owned) if (h.alive) h.dispose();
      this.safeDispose(context, runtime);
      throw e;
    }
  }

  /** Guest → host helper call: validates, calls the seam, and returns a guest promise of the result's JSON. */
  private hostCall(context: QuickJSContext, nameH: QuickJSHandle, argsH: QuickJSHandle): QuickJSHandle {
    const name = context.getString(nameH) as FilterHelperName;
    const args = JSON.parse(context.getString(argsH)) as unknown[];
    const deferred = context.newPromise();
    const work = (async () => {
      if (!this.helpers) throw new Error("key-value store not connected: qnLib helpers are unavailable");
      checkHelperArgs(name, args);
      const fn = this.helpers[name] as (...a: unknown[]) => Promise<unknown>;
      const value = await fn.apply(this.helpers, args);
      return JSON.stringify(value ?? null);
    })();
    const entry = {
      deferred,
      settled: work.then(
        (json) => {
          if (!context.alive) return;
          const h = context.newString(json);
          deferred.resolve(h);
          h.dispose();
        },
        (e: unknown) => {
          if (!context.alive) return;
          const h = context.newError(e instanceof Error ? e.message : String(e));
          deferred.reject(h);
          h.dispose();
        },
      ),
    };
    this.pending.add(entry);
    void entry.settled.then(() => this.pending.delete(entry));
    return deferred.handle;
  }

  private teardown(): void {
    const inst = this.instance;
    this.instance = undefined;
    for (const p of this.pending) if (p.deferred.alive) p.deferred.dispose();
    this.pending.clear();
    if (!inst) return;
    if (inst.run.alive) inst.run.dispose();
    this.safeDispose(inst.context, inst.runtime);
  }

  /**
   * Disposal after an exhausted heap can trip QuickJS's leak assertion; the runtime is unusable either
   * way, so the error is swallowed and the next call builds a new runtime.
   */
  private safeDispose(context: QuickJSContext, runtime: QuickJSRuntime): void {
    try {
      if (context.alive) context.dispose();
    } catch {
      /* see above */
    }
    try {
      if (runtime.alive) runtime.dispose();
    } catch {
      /* see above */
    }
  }
}

/** A filter error as one line: `KIND: message (line N)`. */
export function filterErrorText(error: FilterError): string {
  return `${error.kind}: ${error.message}${error.line ? ` (line ${error.line})` : ""}`;
}

/** Creates a filter (loads the shared WASM module on first use). Compilation happens on the first run or check(). */
export async function createFilter(options: FilterOptions): Promise<Filter> {
  const module = await loadModule();
  return new Filter(module, options.source, options.version ?? DEFAULT_FILTER_VERSION, options.helpers, {
    ...DEFAULT_FILTER_LIMITS,
    ...options.limits,
  });
}

/** One-shot run for "test filter function": builds, runs once on the input, disposes. */
export async function testFilter(options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
  const filter = await createFilter(options);
  try {
    return await filter.run(input);
  } finally {
    filter.dispose();
  }
}
