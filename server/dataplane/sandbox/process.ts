import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { sandboxHostLaunch } from "../../platform/server-build.mjs";
import { sandboxLaunch } from "./confine.ts";
import { type FromHost, readFrames, type ToHost, writeFrame } from "./frames.ts";
import {
  FILTER_HELPER_NAMES,
  FILTER_WRITE_HELPERS,
  type FilterError,
  type FilterHelperName,
  type FilterHelpers,
  type FilterLog,
  type FilterLogLevel,
  type SandboxLoss,
} from "./types.ts";

/**
 * The service's side of the sandbox processes (host.ts): starts one on first use, sends it filters to
 * open and calls to run, answers its helper requests from each call's FilterHelpers, and replaces it
 * when it dies or stops answering. User code never runs in this process.
 *
 * Two processes, by the calls' time limits (see {@link sandboxProcess}): a fast one for short limits
 * (filters), which runs one call at a time and answers small calls in tens of microseconds, and a slow
 * one for long limits (functions), which runs several calls at once so one long call holds up no other.
 * A third, the quarantine, runs the code of accounts whose code crashed one of them (see quarantine).
 *
 * Watchdog: while calls are in flight the process must answer something within the longest of their
 * time limits plus GRACE_MS (isolated-vm stops running code at the limit; an isolate V8 lost control
 * of does not stop). Past that it is killed and restarted, and every call in flight fails: the call
 * that ran too long with TIMEOUT, the others with a RUNTIME error saying to retry.
 */
/** Past its time limit plus this, a call still running is one V8 cannot stop (the in-thread watch allows the same). */
export const GRACE_MS = 2_000;
/** Starting the process (Node, isolated-vm, tsx when it runs the sources) takes about a second, several on a busy machine. */
const START_MS = 30_000;
/**
 * How often the watchdog looks at a busy sandbox process: its time limits and its resident memory (see
 * MEMORY_OVERHEAD_MIB). A memory bomb grew the process by 150–700 MB a second here, so 20 ms lets it pass
 * its budget by a few MB at most before it is killed; a look is one read of /proc/<pid>/statm (~15 µs).
 */
export const WATCHDOG_EVERY_MS = 20;
/**
 * What a sandbox process may hold besides its isolates' memory limits: Node, tsx (or the bundle) and isolated-vm at start
 * (~80 MB resident here), the freed memory glibc keeps for the next batch (HOST_MALLOC's trim threshold,
 * 128 MiB), and the few MB a bomb grows between two looks of the watchdog. The process's resident memory
 * is held to the sum of the limits of the isolates open in it plus this (see SandboxProcess.check): V8
 * counts only its heap against an isolate's limit, and JSON.parse of a 120 MB text held 1.4 GB of
 * malloc'd parser memory outside it (docs/decisions/0700-sandbox-memory-budget.md).
 */
export const MEMORY_OVERHEAD_MIB = 256;
/**
 * The rule, written once for every host: what a process may hold (MiB) for isolates with these memory
 * limits, besides `beforeMiB`, what it held that is not theirs to count. A sandbox process counts its
 * whole resident memory (beforeMiB 0: its start is in the overhead); the stream engine's thread, whose
 * process also holds the engine, counts a call's growth over what the process held when the call began
 * (see in-thread.ts).
 */
export function memoryBudgetMiB(admittedMiB: Iterable<number>, beforeMiB = 0): number {
  let admitted = 0;
  for (const mib of admittedMiB) admitted += mib;
  return beforeMiB + admitted + MEMORY_OVERHEAD_MIB;
}
const PAGE_BYTES = 4096;
const MIB = 1024 * 1024;
/** Calls with a time limit up to this go to the fast process, longer ones to the slow one. */
export const FAST_LANE_MAX_MS = 1_000;
/** Opening runs top-level code under a filter's limit; this covers compiling it and any limit a filter is given. */
export const OPEN_WATCH_MS = 10_000;
/** After its time limit, a call waiting for helpers is failed by the sandbox process when told so. */
const EXPIRE_AFTER_MS = 5;
/** The checkout whose sources (or current bundle, see sandboxHostLaunch) the sandbox process runs. */
export const ROOT_DIR = fileURLToPath(new URL("../../../", import.meta.url));
/**
 * glibc's allocator in the sandbox process: each batch's text is copied into a fresh buffer of its
 * size; by default one over 128 KiB is mapped from the kernel and returned after the call, and the
 * page faults of mapping it again cost ~0.5 µs per KiB (a 1 MiB batch: ~600 µs, against ~100 µs once
 * freed memory is kept for the next batch). Up to TRIM bytes of freed memory stay in the process.
 */
const HOST_MALLOC = {
  MALLOC_MMAP_THRESHOLD_: String(64 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(128 * 1024 * 1024),
};
/**
 * What the sandbox process keeps of the service's environment: what Node and its TypeScript loader read.
 * It runs tenants' code, and code that got out of V8 would read the rest (DATABASE_URL, the S3 and Redis
 * credentials, passwords) from its own environment. (Its user and network: see confine.ts.)
 */
const HOST_ENV = /^(PATH|TMPDIR|TMP|TEMP|TZ|LANG|LC_[A-Z]+|NODE_ENV|NODE_OPTIONS|TSX_[A-Z_]+)$/;
function hostEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...HOST_MALLOC };
  for (const [name, value] of Object.entries(process.env)) if (HOST_ENV.test(name)) env[name] = value;
  return env;
}
const LEVELS = new Set<string>(["INFO", "WARNING", "ERROR"]);

export interface HostOutcome {
  error: FilterError | null;
  heapBytes: number;
  /**
   * How long the call took in the sandbox process (null when it died): the call's own duration,
   * without the trip through the pipe and the wait for this process's event loop to take the answer.
   */
  durationMs: number | null;
  /** The guest's encoded outcome (see bootstrap.ts). */
  body: string;
  /** The call did not run: the filter was not loaded in the sandbox process (see Filter.run). */
  unloaded?: boolean;
  /** The console lines the call wrote, also when it failed or its sandbox process died. */
  logs: FilterLog[];
  /** The sandbox was replaced while the call was in flight: by this call's doing or another's. */
  lost?: SandboxLoss;
  /**
   * With `lost: "bystander"`: the call can run again as if it never ran. It asked for no helper that writes
   * (FILTER_WRITE_HELPERS, the only effect user code has outside its isolate), and it is not a call of the
   * filter that crashed the sandbox (sent behind its crashing call, it would likely crash the next one).
   */
  runAgain?: boolean;
}

interface PendingCall {
  fid: number;
  sentAt: number;
  timeoutMs: number;
  helpers: FilterHelpers | undefined;
  logs: FilterLog[];
  /** It asked for a helper that writes (see FILTER_WRITE_HELPERS). */
  wrote: boolean;
  /** Set once the call is still running after it was sent (see run). */
  expiry: NodeJS.Timeout | undefined;
  /** Helper requests it made that were not answered yet: while it has some, its code is not running. */
  waitingHelpers: number;
  /** Set once run() has returned a promise: the outcome goes to it; until then it is kept in `ended`. */
  resolve: ((outcome: HostOutcome) => void) | undefined;
  ended: HostOutcome | undefined;
}

/** A call's outcome, to its promise or, while run() is still sending it, kept for run() to return. */
function settle(call: PendingCall, outcome: HostOutcome): void {
  if (call.resolve) call.resolve(outcome);
  else call.ended = outcome;
}

interface PendingOpen {
  resolve: (error: FilterError | null, lost?: SandboxLoss) => void;
  reject: (e: Error) => void;
}

/**
 * A sandbox process past its memory budget (see SandboxProcess.check): the calls blamed for it (by request
 * id), what they are told, and the memory they are reported to have used.
 */
interface MemoryBreach {
  rids: Set<number>;
  message: string;
  usedBytes: number;
  /** Several accounts' calls were running: none is quarantined for it (which one grew is not known). */
  spareOwners: boolean;
}

/** Raised to a caller when the sandbox process failed around its call (not the caller's code). */
export class SandboxRestarted extends Error {}

type HelperArg = "string" | "strings" | "object" | "version";
const HELPER_ARGS: Record<FilterHelperName | "itemsSnapshot", HelperArg[]> = {
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
  itemsSnapshot: ["string", "version"],
};
/**
 * The fields of a helper's options object, each optional: an array of strings, or an object whose
 * values are strings. Checked here with the arguments: a wrong one reached the store, which answered
 * "could not answer; try again" to a mistake that trying again does not mend.
 */
const HELPER_OPTIONS: Partial<Record<FilterHelperName, Record<string, "strings" | "stringValues">>> = {
  qnUpsertList: { add_items: "strings", remove_items: "strings" },
  qnBulkSets: { add_sets: "stringValues", delete_sets: "strings" },
};
const CALLABLE = new Set<string>([...FILTER_HELPER_NAMES, "itemsSnapshot"]);

const isStrings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function checkHelperArgs(name: FilterHelperName | "itemsSnapshot", args: unknown[]): void {
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
          ? isStrings(v)
          : kind === "version"
            ? v === null || typeof v === "number"
            : isObject(v);
    if (!ok) {
      const what =
        kind === "strings"
          ? "an array of strings"
          : kind === "string"
            ? "a string"
            : kind === "version"
              ? "a number or null"
              : "an object";
      throw new TypeError(`qnLib.${name}: argument ${i + 1} must be ${what}`);
    }
    if (kind !== "object" || !isObject(v)) return;
    for (const [field, shape] of Object.entries(HELPER_OPTIONS[name as FilterHelperName] ?? {})) {
      const value = v[field];
      if (value === undefined || value === null) continue;
      const fits =
        shape === "strings"
          ? isStrings(value)
          : isObject(value) && Object.values(value).every((x) => typeof x === "string");
      if (!fits) {
        const what = shape === "strings" ? "an array of strings" : "an object whose values are strings";
        throw new TypeError(`qnLib.${name}: ${field} must be ${what}`);
      }
    }
  });
}

/**
 * The caller's side of the sandbox (isolates.ts), whichever host runs it: opens filters, runs calls,
 * keeps batches until read, answers helper requests from each call's FilterHelpers, collects logs.
 * SandboxProcess runs the sandbox in a process of its own; InThreadSandbox (in-thread.ts) on this thread.
 */
export abstract class SandboxHost {
  /** Bumped when the sandbox is replaced: a filter loaded in an earlier generation is loaded again. */
  generation = 1;
  constructor(protected readonly lane: SandboxLane) {}

  private nextId = 1;
  protected readonly calls = new Map<number, PendingCall>();
  protected readonly opens = new Map<number, PendingOpen>();
  /** Per filter, the batches of its last two calls that were kept here (see run), newest first. */
  protected readonly kept = new Map<number, { rid: number; data: string }[]>();

  protected abstract ensureStarted(): void;
  protected abstract send(header: ToHost, body?: string): void;
  /** A call or an open is in flight (the first of them). */
  protected abstract busy(): void;
  /** Maybe nothing is in flight any more. */
  protected abstract idle(): void;
  /** V8 lost control of an isolate (see isolates.ts). */
  protected abstract fatal(fid: number | null, message: string): void;
  /** The memory limit (MiB) of each filter's isolate opened here: what the process may hold for it. */
  protected readonly admittedMiB = new Map<number, number>();
  /** Whose filter each open filter is, when it was opened with a label (see open). */
  protected readonly labels = new Map<number, string>();
  /** The account whose code each open filter is, when it was opened with one (see open). */
  private readonly owners = new Map<number, string>();
  /** The account whose code a filter is, when it was opened with one. */
  protected ownerOf(fid: number): string | undefined {
    return this.owners.get(fid);
  }
  /** A filter was opened with a label (a host that tells others whose filter it is, see in-thread.ts). */
  protected labelled(_fid: number, _label: string): void {}
  /** A filter's isolate was admitted with this memory limit (a host whose watch holds calls to it, see in-thread.ts). */
  protected admitted(_fid: number, _memoryMiB: number): void {}

  newId(): number {
    return this.nextId++;
  }

  /**
   * Opens (compiles and loads) a filter; its error, or null. Rejects when the process failed. `label`
   * names whose filter it is (a stream's id) to a host that can tell who held it (see in-thread.ts);
   * `owner`, the account whose code it is, is quarantined if the code crashes this sandbox.
   */
  open(
    fid: number,
    header: Omit<Extract<ToHost, { op: "open" }>, "op" | "fid">,
    source: string,
    { label, owner }: { label?: string; owner: string | null },
  ) {
    this.ensureStarted();
    if (label !== undefined) {
      this.labels.set(fid, label);
      this.labelled(fid, label);
    }
    if (owner !== null) this.owners.set(fid, owner);
    this.admittedMiB.set(fid, header.memoryMiB);
    this.admitted(fid, header.memoryMiB);
    const generation = this.generation;
    return new Promise<{ error: FilterError | null; generation: number; lost?: SandboxLoss }>((resolve, reject) => {
      this.opens.set(fid, { resolve: (error, lost) => resolve({ error, generation, lost }), reject });
      this.busy();
      this.send({ op: "open", fid, ...header }, source);
    });
  }

  /** Whether run() can keep a batch here until the filter reads it (the fast process). */
  get keepsBatches(): boolean {
    return this.lane === "fast";
  }

  /**
   * Runs a call. `keep` (with keepsBatches, for a JSON array): the text stays here and is sent only if
   * the filter reads it, during this call or its next one. The outcome itself when the call ended while
   * it was sent (on this thread, unless main awaits helpers), otherwise a promise of it. `parsed`: the
   * batch is parsed before main runs (see the run frame).
   */
  run(
    fid: number,
    meta: string,
    data: string,
    timeoutMs: number,
    helpers: FilterHelpers | undefined,
    keep = false,
    parsed = false,
  ): HostOutcome | Promise<HostOutcome> {
    this.ensureStarted();
    const rid = this.newId();
    if (keep) {
      const kept = this.kept.get(fid) ?? [];
      this.kept.set(fid, [{ rid, data }, ...kept.slice(0, 1)]);
    }
    const call: PendingCall = {
      fid,
      sentAt: Date.now(),
      timeoutMs,
      helpers,
      logs: [],
      wrote: false,
      waitingHelpers: 0,
      expiry: undefined,
      resolve: undefined,
      ended: undefined,
    };
    this.calls.set(rid, call);
    this.busy();
    if (keep) this.send({ op: "run", fid, rid, meta, timeoutMs, kept: true });
    else this.send({ op: "run", fid, rid, meta, timeoutMs, parsed }, data);
    if (call.ended) return call.ended;
    // Still running (always, in the sandbox process; on this thread only an async main awaiting helpers):
    // told to expire after its limit, as running code is stopped by isolated-vm's timeout.
    call.expiry = setTimeout(() => this.send({ op: "expire", rid }), timeoutMs + EXPIRE_AFTER_MS);
    call.expiry.unref();
    return new Promise<HostOutcome>((resolve) => {
      call.resolve = resolve;
    });
  }

  close(fid: number): void {
    this.kept.delete(fid);
    this.labels.delete(fid);
    this.owners.delete(fid);
    this.admittedMiB.delete(fid);
    this.send({ op: "close", fid });
  }

  protected onFrame(h: FromHost, body: string): void {
    switch (h.op) {
      case "ready":
        return;
      case "opened": {
        const open = this.opens.get(h.fid);
        this.opens.delete(h.fid);
        // A filter that did not load holds no isolate.
        if (h.error) this.admittedMiB.delete(h.fid);
        open?.resolve(h.error);
        this.idle();
        return;
      }
      case "done": {
        const call = this.calls.get(h.rid);
        if (!call) return;
        this.calls.delete(h.rid);
        clearTimeout(call.expiry);
        settle(call, {
          error: h.error,
          heapBytes: h.heapBytes,
          durationMs: h.ms,
          body,
          logs: call.logs,
          unloaded: h.unloaded,
        });
        this.idle();
        return;
      }
      case "log":
        this.calls
          .get(h.rid)
          ?.logs.push({ level: LEVELS.has(h.level) ? (h.level as FilterLogLevel) : "INFO", message: body });
        return;
      case "helper":
        void this.helper(h.rid, h.hid, h.name, body);
        return;
      case "need": {
        const batch = this.kept.get(h.fid)?.find((k) => k.rid === h.rid);
        this.send({ op: "batch", rid: h.rid, found: batch !== undefined }, batch?.data ?? "");
        return;
      }
      case "fatal":
        this.fatal(h.fid, h.message);
        return;
    }
  }

  private async helper(rid: number, hid: number, name: string, argsJson: string): Promise<void> {
    const call = this.calls.get(rid);
    if (!call) return;
    call.waitingHelpers++;
    let reply: { ok: boolean; body: string };
    try {
      if (!CALLABLE.has(name)) throw new Error(`qnLib has no helper ${name}`);
      const helpers = call.helpers;
      if (!helpers) throw new Error("key-value store not connected: qnLib helpers are unavailable");
      const args = JSON.parse(argsJson) as unknown[];
      const helperName = name as FilterHelperName | "itemsSnapshot";
      checkHelperArgs(helperName, args);
      // Before it runs: if the sandbox is lost meanwhile, the write may have happened all the same.
      if (FILTER_WRITE_HELPERS.has(name)) call.wrote = true;
      const fn = helpers[helperName] as ((...a: unknown[]) => Promise<unknown>) | undefined;
      if (typeof fn !== "function") throw new Error(`qnLib.${name} is not available here`);
      reply = { ok: true, body: JSON.stringify((await fn.apply(helpers, args)) ?? null) };
    } catch (e) {
      reply = { ok: false, body: e instanceof Error ? e.message : String(e) };
    }
    call.waitingHelpers--;
    if (this.calls.get(rid) === call) this.send({ op: "helped", rid, hid, ok: reply.ok }, reply.body);
  }

  /**
   * Fails what was in flight when the sandbox was lost (`why`); the next call starts a new one.
   * `culprit`: the filter that crashed it, when known. Returns the filters blamed (by label), the
   * accounts quarantined for them, and the calls failed. Labels and owners are forgotten: a filter
   * opened again in the next sandbox gives its own again.
   */
  protected failInFlight(
    culprit: number | null,
    why: string,
    breach?: MemoryBreach,
  ): { blamed: string[]; quarantined: string[]; failed: number } {
    const blamed: string[] = [];
    const quarantined = new Set<string>();
    const blame = (fid: number) => {
      blamed.push(this.labels.get(fid) ?? `unlabelled filter ${fid}`);
      const owner = this.owners.get(fid);
      if (owner !== undefined && !breach?.spareOwners) {
        quarantine(owner);
        quarantined.add(owner);
      }
    };
    const failed = this.calls.size + this.opens.size;
    this.generation++;
    const now = Date.now();
    // Of a filter's calls sent ahead (see Filter.run), only the first can have been running: the
    // others waited for it.
    const seen = new Set<number>();
    // The fast lane runs one call at a time, in the order sent (a call waiting for helpers past its limit
    // was expired): when it stopped answering, it was running the first call sent that is past its limit;
    // the later ones only waited behind it.
    const overdueAt = (call: PendingCall) => now - call.sentAt > call.timeoutMs;
    const stuck =
      culprit === null && !breach && this.lane === "fast" ? [...this.calls.values()].find(overdueAt) : undefined;
    const verdicts = [...this.calls].map(([rid, call]) => {
      const first = !seen.has(call.fid);
      seen.add(call.fid);
      const guilty = breach
        ? breach.rids.has(rid)
        : culprit !== null
          ? first && call.fid === culprit
          : stuck
            ? call === stuck
            : first && overdueAt(call);
      return { call, guilty };
    });
    const guiltyFilters = new Set(verdicts.filter((v) => v.guilty).map((v) => v.call.fid));
    for (const { call, guilty } of verdicts) {
      clearTimeout(call.expiry);
      if (guilty) blame(call.fid);
      settle(call, {
        error: guilty
          ? breach
            ? { kind: "MEMORY", message: breach.message }
            : culprit !== null
              ? { kind: "MEMORY", message: `filter crashed the sandbox: ${why}; the sandbox was restarted` }
              : { kind: "TIMEOUT", message: `filter ran longer than its time limit of ${call.timeoutMs} ms: ${why}` }
          : { kind: "RUNTIME", message: `${why}; the sandbox was restarted before this call finished, retry it` },
        heapBytes: guilty && breach ? breach.usedBytes : 0,
        durationMs: null,
        body: "",
        logs: call.logs,
        lost: guilty ? "culprit" : "bystander",
        // Not a call of the filter that crashed it (it would crash the next sandbox too), nor one that wrote.
        runAgain: !guilty && !guiltyFilters.has(call.fid) && !call.wrote,
      });
    }
    this.calls.clear();
    this.kept.clear();
    for (const [fid, open] of this.opens) {
      if (fid === culprit) {
        blame(fid);
        open.resolve({ kind: "MEMORY", message: `filter crashed the sandbox while loading: ${why}` }, "culprit");
      } else open.reject(new SandboxRestarted(`${why}; the filter could not be loaded, retry`));
    }
    this.opens.clear();
    this.labels.clear();
    this.owners.clear();
    this.admittedMiB.clear();
    this.idle();
    return { blamed, quarantined: [...quarantined], failed };
  }
}

/**
 * The memory look of a busy sandbox process, on a thread of its own: the service's thread, which also runs
 * the service, came to its 20 ms look late enough under load for a bomb to pass the budget by 69 MiB. Plain
 * JavaScript run as a worker from this text (no loader needed in the bundle or under tsx). It reads
 * [pid watched (0: none), budget in pages] from the shared array; past the budget it writes [pid, pages]
 * into slots 2 and 3 and kills the process, whose exit then fails its running calls MEMORY (see
 * SandboxProcess). The service thread's look (check, which also holds the time limits) stays: whichever
 * sees the breach first ends the process.
 */
const MEMORY_WATCH_SOURCE = `
const { workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
const { watch, everyMs } = workerData;
setInterval(() => {
  const pid = Atomics.load(watch, 0);
  if (pid === 0) return;
  let pages;
  try {
    pages = Number(readFileSync("/proc/" + pid + "/statm", "utf8").split(" ")[1]);
  } catch {
    return;
  }
  if (!(pages > Atomics.load(watch, 1))) return;
  Atomics.store(watch, 3, pages);
  Atomics.store(watch, 2, pid);
  Atomics.store(watch, 0, 0);
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
}, everyMs);
`;

export class SandboxProcess extends SandboxHost {
  private child: ChildProcess | null = null;
  /** [pid the thread watches (0: none), budget in pages, pid it killed, its resident pages then]. */
  private readonly memoryWatch = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
  private memoryWatchThread: Worker | null = null;
  private socket: Socket | null = null;
  private lastHeard = 0;
  private ready = false;
  private startedAt = 0;
  private watchdog: NodeJS.Timeout | null = null;
  /** Its resident memory when it said it was ready, idle: what calls' growth is counted from. */
  private baseBytes: number | null = null;

  /** The sandbox process's pid while it runs (tests kill it to see a crash contained). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Ends the process (tests; the service exiting ends it too, its pipe closing). */
  stop(): void {
    this.restart(null, "the sandbox process was stopped");
  }

  protected send(header: ToHost, body?: string): void {
    if (this.socket) writeFrame(this.socket, header, body);
  }

  protected ensureStarted(): void {
    if (this.child) return;
    const [command, ...args] = [
      ...sandboxLaunch().prefix,
      process.execPath,
      ...sandboxHostLaunch(ROOT_DIR).args,
      this.lane,
    ];
    const child = spawn(command, args, {
      stdio: ["ignore", "inherit", "inherit", "pipe"],
      env: hostEnv(),
    });
    const socket = child.stdio[3] as Socket;
    this.ready = false;
    this.startedAt = Date.now();
    this.child = child;
    this.socket = socket;
    readFrames<FromHost>(socket, (frame) => this.onFrame(frame.header, frame.body, child));
    socket.on("error", () => {});
    child.on("exit", (code, signal) => {
      if (this.child !== child) return;
      const watch = this.memoryWatch;
      if (child.pid !== undefined && Atomics.load(watch, 2) === child.pid) {
        Atomics.store(watch, 2, 0);
        this.memoryBreached(Atomics.load(watch, 3) * PAGE_BYTES);
      } else this.restart(null, `the sandbox process exited (${signal ?? `code ${code}`})`);
    });
    child.on("error", (e) => {
      if (this.child === child) this.restart(null, `the sandbox process could not be started (${e.message})`);
    });
    this.idle();
  }

  /** In flight: keep the service's event loop (a script awaiting a call) alive and watch the process. */
  protected busy(): void {
    if (this.calls.size + this.opens.size === 1) {
      this.lastHeard = Date.now();
      this.child?.ref();
      this.socket?.ref();
    }
    this.watchdog ??= setInterval(() => this.check(), WATCHDOG_EVERY_MS);
    if (!this.memoryWatchThread) {
      this.memoryWatchThread = new Worker(MEMORY_WATCH_SOURCE, {
        eval: true,
        workerData: { watch: this.memoryWatch, everyMs: WATCHDOG_EVERY_MS },
      });
      this.memoryWatchThread.unref();
    }
    this.watchMemory();
  }

  /** Tells the memory watch thread the process and its budget (after a start or an admission). */
  private watchMemory(): void {
    Atomics.store(this.memoryWatch, 1, Math.floor((this.memoryBudgetMiB * MIB) / PAGE_BYTES));
    Atomics.store(this.memoryWatch, 0, this.ready ? (this.child?.pid ?? 0) : 0);
  }

  protected override admitted(): void {
    if (this.calls.size + this.opens.size > 0) this.watchMemory();
  }

  protected idle(): void {
    if (this.calls.size + this.opens.size > 0) return;
    Atomics.store(this.memoryWatch, 0, 0);
    this.child?.unref();
    this.socket?.unref();
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  /** The process's resident memory (bytes), or null when it cannot be read (it is gone). */
  private residentBytes(): number | null {
    const pid = this.child?.pid;
    if (pid === undefined) return null;
    try {
      return Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * PAGE_BYTES;
    } catch {
      return null;
    }
  }

  /** MiB the process may hold: its isolates' limits and MEMORY_OVERHEAD_MIB. */
  get memoryBudgetMiB(): number {
    return memoryBudgetMiB(this.admittedMiB.values());
  }

  /**
   * Past its budget, the process is killed and the calls whose code was running (not waiting for a
   * helper's answer) fail with MEMORY: in the fast process the one call it runs; in the others every one
   * running then, since what V8 holds outside an isolate's heap cannot be told apart per isolate (and an
   * isolate's own statistics wait until its code yields). Their owners are quarantined when only one account's code ran.
   */
  private checkMemory(): boolean {
    const rss = this.residentBytes();
    if (rss === null || rss <= this.memoryBudgetMiB * MIB) return false;
    this.memoryBreached(rss);
    return true;
  }

  /** The process held `rss` bytes, past its budget (seen here or by the memory watch thread, which killed it). */
  private memoryBreached(rss: number): void {
    const budget = this.memoryBudgetMiB;
    const running = [...this.calls].filter(([, call]) => call.waitingHelpers === 0);
    const culprits = this.lane === "fast" ? running.slice(0, 1) : running;
    const owners = new Set(culprits.map(([, call]) => this.ownerOf(call.fid)));
    const usedBytes = Math.max(0, rss - (this.baseBytes ?? 0));
    const others = culprits.length > 1 ? ` with ${culprits.length - 1} other call(s)` : "";
    this.restart(
      null,
      `the sandbox process held ${Math.round(rss / MIB)} MiB, past its ${budget} MiB (its isolates' limits and ${MEMORY_OVERHEAD_MIB} MiB)`,
      {
        rids: new Set(culprits.map(([rid]) => rid)),
        message: `filter exceeded its memory limit: its sandbox process grew by ${Math.round(usedBytes / MIB)} MiB while it ran${others}, past the ${budget} MiB the limits of its isolates allow (memory outside V8's heap counts too); the sandbox was restarted`,
        usedBytes,
        spareOwners: owners.size > 1,
      },
    );
  }

  private check(): void {
    const now = Date.now();
    if (!this.ready) {
      if (now - this.startedAt > START_MS)
        this.restart(null, `the sandbox process did not start within ${START_MS} ms`);
      return;
    }
    if (this.checkMemory()) return;
    let longest = 0;
    for (const call of this.calls.values()) longest = Math.max(longest, call.timeoutMs);
    if (this.opens.size > 0) longest = Math.max(longest, OPEN_WATCH_MS);
    if (now - this.lastHeard > longest + GRACE_MS) {
      this.restart(
        null,
        "the sandbox process stopped answering: V8 could not stop the call (an isolate that allocates far past its memory limit in one step can do this)",
      );
    }
  }

  protected override onFrame(h: FromHost, body: string, child?: ChildProcess): void {
    if (child !== this.child) return;
    this.lastHeard = Date.now();
    if (h.op === "ready") {
      this.ready = true;
      this.baseBytes = this.residentBytes();
      if (this.calls.size + this.opens.size > 0) this.watchMemory();
    } else super.onFrame(h, body);
  }

  protected fatal(fid: number | null, message: string): void {
    this.restart(fid, `V8 lost control of the filter's isolate (${message})`);
  }

  /**
   * Kills the process (if alive) and fails what was in flight; the next call starts a new one.
   * `culprit`: the filter that crashed it, when known.
   */
  private restart(culprit: number | null, why: string, breach?: MemoryBreach): void {
    const child = this.child;
    this.child = null;
    Atomics.store(this.memoryWatch, 0, 0);
    this.socket = null;
    this.baseBytes = null;
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    const { blamed, quarantined, failed } = this.failInFlight(culprit, why, breach);
    if (child && failed > 0)
      sandboxLog?.warn(
        { lane: this.lane, blamed, quarantined, failedCalls: failed },
        `sandbox process replaced: ${why}`,
      );
  }
}

/** Where replacements of the sandbox processes are told (see logSandboxTo). */
let sandboxLog: Pick<Logger, "warn"> | null = null;

/** The service's log, for the sandbox processes' replacements: why, which filter was blamed, how many calls failed. */
export function logSandboxTo(log: Pick<Logger, "warn">): void {
  sandboxLog = log;
}

/**
 * How long an account whose code crashed a sandbox (blamed for it: V8 lost its isolate, or it ran on past
 * its limit where it could not be stopped) has all its code run in the quarantine process; each crash
 * starts it again. The first crash fails the other accounts' calls in flight with it (they are told to
 * retry); from then on the account's crashes fail only quarantined accounts' calls, so one account
 * crashing its code on purpose, over and over, cannot keep failing everyone's filter tests and functions.
 */
export const QUARANTINE_MS = 10 * 60_000;
/** Per quarantined account, when its quarantine ends. */
const quarantinedUntil = new Map<string, number>();

function quarantine(owner: string): void {
  const now = Date.now();
  // Crashes are rare: ended quarantines are dropped here, so accounts never looked up again are not kept.
  for (const [account, until] of quarantinedUntil) if (until <= now) quarantinedUntil.delete(account);
  quarantinedUntil.set(owner, now + QUARANTINE_MS);
}

/** Until when the account's code runs in the quarantine process, or null when it does not. */
export function quarantineOf(owner: string): number | null {
  const until = quarantinedUntil.get(owner);
  if (until === undefined) return null;
  if (until > Date.now()) return until;
  quarantinedUntil.delete(owner);
  return null;
}

export type SandboxLane = "fast" | "slow" | "quarantine";
/** The quarantine runs several calls at once, as the slow process does: it takes any time limit. */
const lanes = {
  fast: new SandboxProcess("fast"),
  slow: new SandboxProcess("slow"),
  quarantine: new SandboxProcess("quarantine"),
};
/** Where filters run instead of the fast sandbox process (see runFiltersOn). */
let filterHost: SandboxHost | null = null;

/**
 * Runs filters (calls up to FAST_LANE_MAX_MS, not functions) on this host from now on: the stream
 * engine's own process runs them on its thread (in-thread.ts). Filters created before keep theirs.
 */
export function runFiltersOn(host: SandboxHost): void {
  filterHost = host;
}

/**
 * The sandbox for a filter with this time limit: the host runFiltersOn chose, else the sandbox process,
 * or the quarantine process while the owner's code is quarantined. `offThread` (functions): always a
 * sandbox process, whose slow lane runs long calls side by side. (A filter that crashes the host
 * runFiltersOn chose ends its process; the stream engine deals with it, see engine.ts.)
 */
export function filterSandbox(timeoutMs: number, offThread: boolean, owner: string | null): SandboxHost {
  if (!offThread && filterHost && timeoutMs <= FAST_LANE_MAX_MS) return filterHost;
  return owner !== null && quarantineOf(owner) !== null ? lanes.quarantine : sandboxProcess(timeoutMs);
}

/** The quarantine process (see QUARANTINE_MS), started on first use. */
export function quarantineProcess(): SandboxProcess {
  return lanes.quarantine;
}

/**
 * The sandbox process for calls with this time limit (each started on first use): the fast one up to
 * FAST_LANE_MAX_MS (filters' default 1 s and below), the slow one above.
 */
export function sandboxProcess(timeoutMs = FAST_LANE_MAX_MS): SandboxProcess {
  return timeoutMs <= FAST_LANE_MAX_MS ? lanes.fast : lanes.slow;
}
