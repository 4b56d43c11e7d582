import { setFlagsFromString } from "node:v8";
import ivm from "isolated-vm";
import { BOOTSTRAP_SOURCE } from "./bootstrap.ts";
import type { Frame, FromHost, ToHost } from "./frames.ts";
import {
  boundedError,
  errorPlace,
  FILTER_HELPER_NAMES,
  type FilterError,
  MAX_ERROR_CHARS,
  resultTooLarge,
} from "./types.ts";

/**
 * The sandbox itself, written once for both of its hosts: the isolates that run filters and functions
 * (one per open filter), their limits, the bootstrap with its console, qnLib and lazy batch, and the
 * protocol with the caller (frames.ts: ToHost in, FromHost out). Two hosts run it:
 * - the sandbox process (host.ts), for the API process and for functions: user code in another process;
 * - the stream engine's own thread (in-thread.ts), when the engine runs in a process of its own
 *   (server/engine.ts): no process round trip per batch, and still never the thread that serves GraphQL
 *   or the RPC proxy.
 *
 * V8 cannot always recover from an isolate's out-of-memory: some allocations (a 100-million-element array,
 * a JSON.parse of a 200 MB text) end in a "catastrophic" error that leaves the thread stuck and its memory
 * held. Its host then ends its process ("fatal"), which the service restarts.
 */
const FILENAME = "filter.js";

/**
 * The semi-space size (MiB) of a new isolate's young generation: a thirty-second of its memory limit, 1
 * to 4 (2 MiB for a 64 MiB filter). isolated-vm derives a smaller one from the limit (0.5 MiB at 64 MiB),
 * so parsing a batch of ten 150-transaction blocks (1.1 MiB of JSON) promoted most of it into the old
 * generation: the filter ran 1.63× the same code in Node, 1.25× with 2 MiB. A larger young generation
 * (4 MiB at 64: 1.15×) let an object-allocating memory bomb run into the 1 s time limit before the
 * memory limit stopped it (TIMEOUT instead of MEMORY), so the size stays this fraction of the limit.
 * The young generation starts at this size too (V8 starts it at 1 MiB and grows it only when most of it
 * survives, which a filter's garbage never does): "reads all" on 1 × 10 blocks collected it every ~50
 * calls, now every ~90; V8's heap limit is the same (decisions/1815).
 */
function semiSpaceMiB(memoryMiB: number): number {
  return Math.max(1, Math.min(4, Math.floor(memoryMiB / 32)));
}

/** An isolate with this memory limit (MiB) and its young generation sized for it (see semiSpaceMiB). */
export function newIsolate(memoryMiB: number, onCatastrophicError?: (message: string) => void): ivm.Isolate {
  // V8 reads the flags when it creates a heap, over the young generation isolated-vm asks for.
  const semiSpace = semiSpaceMiB(memoryMiB);
  setFlagsFromString(`--max-semi-space-size=${semiSpace}`);
  setFlagsFromString(`--min-semi-space-size=${semiSpace}`);
  return new ivm.Isolate({ memoryLimit: memoryMiB, onCatastrophicError });
}

export interface IsolateLink {
  /**
   * Calls run on the calling thread with `applySync` (~2 µs to enter an isolate), one at a time; a kept
   * batch is asked for synchronously (keptBatch). Otherwise they run on isolated-vm's own threads (~30 µs
   * more), several at once, so one long call does not hold up the others.
   */
  sync: boolean;
  send(header: FromHost, body?: string): void;
  /** The text of a batch the caller kept, asked for inside the isolate's call (sync links). */
  keptBatch(fid: number, rid: number): string | undefined;
  /**
   * A host with its own loop of frames calls afterCalls() before each one and takes the released waiting
   * calls here; without it they run from setImmediate.
   */
  loop?: { release(frame: Frame<ToHost>): void };
}

export interface IsolateRuntime {
  dispatch(header: ToHost, body: string): void;
  /** Drops the isolates to drop, and releases each ended filter's next waiting call. */
  afterCalls(): void;
}

/**
 * How a batch's text enters the isolate. A string argument is copied once, outside V8's heap, and
 * becomes an external string there; a string inside an array goes through isolated-vm's serializer
 * (written out, then read into V8's young generation). Entered with `apply` on isolated-vm's threads,
 * the external string measured ~0.55 µs per KiB against ~0.1 for the serializer, below V8's large-object
 * size (128 KiB): batches up to this size are boxed there. Entered with `applySync` (the engine's thread
 * and the fast process), the string argument was the faster way at every size: "reads all" on 1 × 10
 * blocks (19 KiB) 1.30–1.40× plain against 1.73–1.86× boxed, on 150 × 1 (108 KiB) 1.16× against
 * 1.28–1.39× (the same process, one call at a time, load 13–15).
 */
export const BOXED_MAX_CHARS = 120 * 1024;
const COPY = { copy: true } as const;
/** Helper calls one call may have waiting at once; more are refused (their promise rejects). */
const MAX_WAITING_HELPERS = 256;
/**
 * Characters of JSON one helper call may send (its arguments): 6 Mi, a function's largest result. A
 * call of the most items the store takes (5,000 to add and 5,000 to remove, 256 characters each) is
 * 2.6 Mi. The service parses what a call sends on the thread that answers its API: a function of
 * 256 MB sent 60 MB strings, 20 of them, and took the service from 137 to 532 MB.
 */
const MAX_HELPER_ARGS_CHARS = 6 * 1024 * 1024;

interface Instance {
  fid: number;
  isolate: ivm.Isolate;
  context: ivm.Context;
  run: ivm.Reference<(call: number, data: string, meta: string, parsed: boolean) => string>;
  settle: ivm.Reference<(hid: number, ok: boolean, body: string) => void>;
  memoryMiB: number;
  /** Whether outcomes carry the used heap (see the open frame). */
  heap: boolean;
  /** UTF-8 bytes of JSON a call may return; 0: no limit. */
  maxResultBytes: number;
}

interface Call {
  rid: number;
  inst: Instance;
  deadline: number;
  timeoutMs: number;
  /** Helper requests sent to the service and not answered yet. */
  outstanding: number;
  finished: boolean;
  /**
   * What main settled to (hostFinish), sent once the isolate returns control: promise reactions still
   * running after it are the call's, within its limit (a chain of them ran on after the answer, unbilled).
   */
  answer?: string;
  /** performance.now() when its frame was read. */
  started: number;
}

class HostFault extends Error {
  constructor(readonly hostError: FilterError) {
    super(hostError.message);
  }
}

/** Classifies what isolated-vm threw out of a call or a compile. */
function classify(e: unknown, inst: { isolate: ivm.Isolate; memoryMiB: number }, timeoutMs: number): FilterError {
  if (e instanceof HostFault) return e.hostError;
  const err = e instanceof Error ? e : new Error(String(e));
  if (/Script execution timed out/.test(err.message)) {
    return { kind: "TIMEOUT", message: `filter ran longer than its time limit of ${timeoutMs} ms` };
  }
  if (inst.isolate.isDisposed || /memory limit|disposed/i.test(err.message)) {
    return { kind: "MEMORY", message: `filter exceeded its memory limit of ${inst.memoryMiB} MiB` };
  }
  if (err.name === "SyntaxError") {
    // isolated-vm appends the position: "Unexpected token '}' [filter.js:2:11]".
    const message = err.message.replace(/ \[filter\.js:\d+:\d+\]$/, "");
    return { kind: "SYNTAX", message: `SyntaxError: ${message}`, ...errorPlace(err.message) };
  }
  if (err.name === "RangeError" && /Maximum call stack size exceeded/.test(err.message)) {
    return { kind: "MEMORY", message: "filter exceeded the stack limit (too deep recursion)" };
  }
  return { kind: "RUNTIME", message: `${err.name}: ${err.message}`, ...errorPlace(err.stack) };
}

/**
 * The call's answer, or a RESULT_TOO_LARGE failure in its place when its result is past the filter's
 * limit: refused here, so a result of hundreds of MB never crosses the pipe. The isolate already refused
 * one longer than the limit in UTF-16 units ("L", not copied out); the exact UTF-8 count is made here.
 * An error's text is cut to MAX_ERROR_CHARS here too (see boundedError).
 */
function capped(inst: Instance, out: string): string {
  const limit = inst.maxResultBytes;
  const at = out[0] === "R" ? 1 : 0;
  const tag = out[at];
  // The error's JSON (kind, message, stack) is only read when it could be past the bound.
  if (tag === "E" && out.length > 2 * MAX_ERROR_CHARS + 256) {
    const error = JSON.parse(out.slice(at + 1)) as { kind: string; message: string; stack: string };
    return `${out.slice(0, at)}E${JSON.stringify(boundedError(error))}`;
  }
  if (limit === 0 || (tag !== "V" && tag !== "L")) return out;
  const counted = tag === "L";
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a result this short needs no count.
  if (!counted && (out.length - at - 1) * 3 <= limit) return out;
  const size = counted ? Number(out.slice(at + 1)) : Buffer.byteLength(out) - at - 1;
  if (!counted && size <= limit) return out;
  return `${out.slice(0, at)}E${JSON.stringify({ ...resultTooLarge(size, limit, counted), stack: "" })}`;
}

export function isolateRuntime(link: IsolateLink): IsolateRuntime {
  const instances = new Map<number, Instance>();
  const calls = new Map<number, Call>();

  function drop(fid: number): void {
    const inst = instances.get(fid);
    instances.delete(fid);
    if (inst && !inst.isolate.isDisposed) inst.isolate.dispose();
  }

  function open(h: Extract<ToHost, { op: "open" }>, source: string): void {
    drop(h.fid);
    const isolate = newIsolate(h.memoryMiB, (message) => link.send({ op: "fatal", fid: h.fid, message }));
    const shell = { isolate, memoryMiB: h.memoryMiB };
    try {
      const context = isolate.createContextSync();
      const boot = context.evalSync(BOOTSTRAP_SOURCE, { filename: "bootstrap.js", reference: true }) as ivm.Reference<
        (...args: unknown[]) => unknown
      >;
      const api = boot.applySync(
        undefined,
        [
          new ivm.Callback((call: number, hid: number, name: string, args: string) =>
            helper(h.fid, call, hid, name, args),
          ),
          new ivm.Callback((call: number, out: string) => finishAsync(h.fid, call, out)),
          new ivm.Callback((call: number, level: string, message: string) => log(h.fid, call, level, message)),
          new ivm.Callback((call: number) => (link.sync ? link.keptBatch(h.fid, call) : undefined)),
          new ivm.ExternalCopy([...FILTER_HELPER_NAMES]).copyInto(),
          h.version,
          h.maxLogLines,
          h.maxLogChars,
          h.maxLogCharsPerCall,
          h.snapshots,
          h.maxResultBytes,
        ],
        { timeout: h.timeoutMs, result: { reference: true } },
      ) as ivm.Reference<Record<string, unknown>>;
      const bind = api.getSync("bind", { reference: true }) as ivm.Reference<(main: unknown) => unknown>;
      const settle = api.getSync("settle", { reference: true }) as Instance["settle"];
      // Compilation and top-level code get the same time budget as one call.
      const script = isolate.compileScriptSync(source, { filename: FILENAME });
      script.runSync(context, { timeout: h.timeoutMs });
      const main = context.evalSync("typeof main === 'function' ? main : undefined", {
        reference: true,
      }) as ivm.Reference<unknown>;
      if (main.typeof !== "function") {
        throw new HostFault({ kind: "SYNTAX", message: "the filter must define function main(stream)" });
      }
      const run = bind.applySync(undefined, [main.derefInto()], { result: { reference: true } }) as Instance["run"];
      instances.set(h.fid, {
        fid: h.fid,
        isolate,
        context,
        run,
        settle,
        memoryMiB: h.memoryMiB,
        heap: h.heap,
        maxResultBytes: h.maxResultBytes,
      });
      link.send({ op: "opened", fid: h.fid, error: null });
    } catch (e) {
      const error = classify(e, shell, h.timeoutMs);
      if (!isolate.isDisposed) isolate.dispose();
      // Top-level code that throws is reported as the filter not loading, with the thrown error.
      link.send({ op: "opened", fid: h.fid, error: boundedError(error) });
    }
  }

  /**
   * Enters the isolate: on this thread in the fast process, on isolated-vm's threads in the slow one.
   * `copy`: the arguments go through isolated-vm's serializer (see BOXED_MAX_CHARS).
   */
  async function invoke<R>(
    call: Call,
    ref: ivm.Reference<(...args: never[]) => R>,
    args: unknown[],
    copy = false,
  ): Promise<R> {
    return (
      link.sync ? invokeSync(call, ref, args, copy) : await ref.apply(undefined, args as never[], optionsOf(call, copy))
    ) as R;
  }

  function invokeSync<R>(call: Call, ref: ivm.Reference<(...args: never[]) => R>, args: unknown[], copy = false): R {
    return ref.applySync(undefined, args as never[], optionsOf(call, copy)) as R;
  }

  function optionsOf(call: Call, copy: boolean): { timeout: number; arguments?: { copy: true } } {
    const remaining = call.deadline - Date.now();
    if (remaining <= 0) throw new HostFault(timeoutError(call));
    return copy ? { timeout: remaining, arguments: COPY } : { timeout: remaining };
  }

  function timeoutError(call: Call): FilterError {
    return { kind: "TIMEOUT", message: `filter ran longer than its time limit of ${call.timeoutMs} ms` };
  }

  function heapOf(inst: Instance): number {
    return !inst.heap || inst.isolate.isDisposed ? 0 : inst.isolate.getHeapStatisticsSync().used_heap_size;
  }

  function finish(call: Call, answer: string): void {
    if (call.finished) return;
    const out = capped(call.inst, answer);
    call.finished = true;
    calls.delete(call.rid);
    link.send(
      { op: "done", rid: call.rid, heapBytes: heapOf(call.inst), ms: performance.now() - call.started, error: null },
      out,
    );
    // An error thrown by main ("E", after the "R" mark of a read batch: see bootstrap.ts) may leave the
    // filter's globals half-updated: its next call, which may already be here, gets a fresh isolate.
    ended(call.inst.fid, out[out[0] === "R" ? 1 : 0] === "E");
  }

  function fail(call: Call, error: FilterError): void {
    if (call.finished) return;
    call.finished = true;
    calls.delete(call.rid);
    const heapBytes = heapOf(call.inst);
    const ms = performance.now() - call.started;
    drop(call.inst.fid);
    link.send({ op: "done", rid: call.rid, heapBytes, ms, error: boundedError(error) });
    ended(call.inst.fid, false);
  }

  /**
   * Calls of a filter that arrived while its previous call was still running (awaiting helpers): the
   * service sends a filter's calls without waiting for answers (see Filter.run), and one isolate runs
   * one call at a time, so each waits here for the one before it.
   */
  const waiting = new Map<number, Frame<ToHost>[]>();

  function busy(fid: number): boolean {
    for (const call of calls.values()) if (call.inst.fid === fid) return true;
    return false;
  }

  /** Waiting calls taken out of `waiting` in their turn (their headers). */
  const released = new WeakSet<ToHost>();
  /** Filters whose call ended, to be handled outside the isolate (see afterCalls); `drop`: its isolate. */
  const endedCalls: { fid: number; drop: boolean }[] = [];

  /** A call ended, maybe inside its isolate (an async main settling during a helper's answer). */
  function ended(fid: number, dropIsolate: boolean): void {
    endedCalls.push({ fid, drop: dropIsolate });
    if (!link.loop && endedCalls.length === 1) setImmediate(afterCalls);
  }

  /** Drops the isolates to drop, and queues each ended filter's next waiting call before later frames. */
  function afterCalls(): void {
    if (endedCalls.length === 0) return;
    for (const { fid, drop: dropIsolate } of endedCalls.splice(0)) {
      if (dropIsolate) drop(fid);
      const queue = waiting.get(fid);
      const next = queue?.shift();
      if (queue?.length === 0) waiting.delete(fid);
      if (!next) continue;
      released.add(next.header);
      if (link.loop) link.loop.release(next);
      else dispatch(next.header, next.body);
    }
  }

  /** After the isolate returns control: an async main with nothing left to wait for can never settle. */
  function afterTurn(call: Call): void {
    if (!call.finished && call.outstanding === 0) {
      fail(call, {
        kind: "RUNTIME",
        message: "main's promise never settled: it awaits something that is never resolved",
      });
    }
  }

  function finishAsync(fid: number, rid: number, out: string): void {
    const call = calls.get(rid);
    if (call && call.inst.fid === fid) call.answer ??= out;
  }

  function log(fid: number, rid: number, level: string, message: string): void {
    const call = calls.get(rid);
    if (call && call.inst.fid === fid && !call.finished && call.answer === undefined)
      link.send({ op: "log", rid, level }, message);
  }

  function helper(fid: number, rid: number, hid: number, name: string, args: string): void {
    const call = calls.get(rid);
    if (!call || call.inst.fid !== fid || call.finished) return;
    if (call.outstanding >= MAX_WAITING_HELPERS) {
      // Thrown into the isolate: the helper's promise rejects with this message.
      throw new Error(`more than ${MAX_WAITING_HELPERS} qnLib calls waiting at once: await them in smaller groups`);
    }
    if (args.length > MAX_HELPER_ARGS_CHARS) {
      throw new Error(
        `qnLib.${name}: its arguments are ${(args.length / 1024 / 1024).toFixed(1)} Mi characters of JSON; a call sends at most ${MAX_HELPER_ARGS_CHARS / 1024 / 1024} Mi`,
      );
    }
    call.outstanding++;
    link.send({ op: "helper", rid, hid, name }, args);
  }

  function run(h: Extract<ToHost, { op: "run" }>, data: string): void {
    if (busy(h.fid) || (waiting.has(h.fid) && !released.delete(h))) {
      const queue = waiting.get(h.fid) ?? [];
      queue.push({ header: h, body: data });
      waiting.set(h.fid, queue);
      return;
    }
    const inst = instances.get(h.fid);
    if (!inst) {
      link.send({
        op: "done",
        rid: h.rid,
        heapBytes: 0,
        ms: 0,
        error: { kind: "RUNTIME", message: "the filter is not loaded" },
        unloaded: true,
      });
      return;
    }
    const call: Call = {
      rid: h.rid,
      inst,
      deadline: Date.now() + h.timeoutMs,
      timeoutMs: h.timeoutMs,
      outstanding: 0,
      finished: false,
      started: performance.now(),
    };
    calls.set(h.rid, call);
    const boxed = !link.sync && !h.kept && data.length <= BOXED_MAX_CHARS;
    const args = [h.rid, h.kept ? null : boxed ? [data] : data, h.meta, h.parsed === true];
    if (!link.sync) {
      invoke(call, inst.run, args, boxed).then(
        (out) => ran(call, out),
        (e: unknown) => fail(call, classify(e, inst, h.timeoutMs)),
      );
      return;
    }
    let out: string;
    try {
      out = invokeSync(call, inst.run, args, boxed);
    } catch (e) {
      fail(call, classify(e, inst, h.timeoutMs));
      return;
    }
    ran(call, out);
  }

  /** What run's entry into the isolate answered: the outcome, or "A" while an async main waits. */
  function ran(call: Call, out: string): void {
    if (out !== "A") finish(call, out);
    else if (call.answer !== undefined) finish(call, call.answer);
    else afterTurn(call);
  }

  /** The service's timer for a call waiting for helpers (running code is stopped by isolated-vm's timeout). */
  function expire(h: Extract<ToHost, { op: "expire" }>): void {
    const call = calls.get(h.rid);
    if (call) fail(call, timeoutError(call));
  }

  function helped(h: Extract<ToHost, { op: "helped" }>, body: string): void {
    const call = calls.get(h.rid);
    if (!call || call.finished) return;
    const threw = (e: unknown) => fail(call, classify(e, call.inst, call.timeoutMs));
    // The answer counts as waiting until the isolate has it: in the slow process it may arrive while the
    // isolate still runs the turn before, which must not then conclude that nothing is left to wait for.
    const settled = () => {
      call.outstanding--;
      if (call.answer !== undefined) finish(call, call.answer);
      else afterTurn(call);
    };
    if (!link.sync) {
      invoke(call, call.inst.settle, [h.hid, h.ok, body]).then(settled, threw);
      return;
    }
    try {
      invokeSync(call, call.inst.settle, [h.hid, h.ok, body]);
    } catch (e) {
      threw(e);
      return;
    }
    settled();
  }

  function dispatch(header: ToHost, body: string): void {
    switch (header.op) {
      case "open":
        open(header, body);
        break;
      case "run":
        run(header, body);
        break;
      case "helped":
        helped(header, body);
        break;
      case "expire":
        expire(header);
        break;
      case "close":
        drop(header.fid);
        break;
      case "batch":
        // The answer to a read of a kept batch whose call has ended meanwhile (it failed): nothing to do.
        break;
    }
  }
  return { dispatch, afterCalls };
}
