import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { Frame, ToHost } from "./frames.ts";
import { type IsolateRuntime, isolateRuntime } from "./isolates.ts";
import {
  GRACE_MS,
  MEMORY_OVERHEAD_MIB,
  memoryBudgetMiB,
  OPEN_WATCH_MS,
  SandboxHost,
  WATCHDOG_EVERY_MS,
} from "./process.ts";

const WATCH_EVERY_MS = 250;
/**
 * Of the budget a call may grow this process by (memoryBudgetMiB of its limit), what the watch leaves
 * for growth it cannot see: a look every 20 ms misses a burst, and JSON.parse copying 3e7 elements into
 * its array touched 90–150 MiB between the look that saw the budget passed and the process's end here. So
 * the watch acts at the limit plus half the overhead, and the process stays within the whole.
 */
const UNSEEN_MIB = MEMORY_OVERHEAD_MIB / 2;

/**
 * The thread watch (see InThreadSandbox): plain JavaScript, run as a worker from this text so it needs
 * no loader in either the bundle or tsx. It reads [filter id, frame count, time limit] from the shared
 * array. When one frame held the thread past its limit plus the grace, or grew the process past the
 * memory budget of the filter it runs (see memoryBudgetMiB in process.ts: what the process held at the
 * watch's look before the frame began, the filter's limit and the overhead, less UNSEEN_MIB), it writes
 * the filter's label and why to the lost file and kills the process (nothing on the held thread can). Memory is read every
 * memoryEveryMs from /proc/self/statm (~15 µs a look, under 0.1% of a core).
 */
const WATCH_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync, writeFileSync } = require("node:fs");
const { state, lostFile, graceMs, everyMs, memoryEveryMs } = workerData;
const MIB = 1024 * 1024;
const labels = new Map();
const budgets = new Map();
parentPort.on("message", (m) => {
  if (m.closed) {
    labels.delete(m.fid);
    budgets.delete(m.fid);
  } else if (m.label !== undefined) labels.set(m.fid, m.label);
  else budgets.set(m.fid, m);
});
const end = (fid, reason) => {
  try {
    writeFileSync(lostFile, JSON.stringify({ label: labels.get(fid) ?? null, reason }));
  } finally {
    process.kill(process.pid, "SIGKILL");
  }
};
// NaN where /proc cannot be read (not Linux): no look then holds a call, and the watch does not fail.
const residentBytes = () => {
  try {
    return Number(readFileSync("/proc/self/statm", "utf8").split(" ")[1]) * 4096;
  } catch {
    return Number.NaN;
  }
};
let memorySeen = -1;
let lastBytes = residentBytes();
let beforeBytes = lastBytes;
setInterval(() => {
  const fid = Atomics.load(state, 0);
  const frames = Atomics.load(state, 1);
  const rss = residentBytes();
  // A frame first seen began after the last look: what the process held then is what it held before it.
  if (fid === 0 || frames !== memorySeen) beforeBytes = lastBytes;
  memorySeen = fid === 0 ? -1 : frames;
  lastBytes = rss;
  if (fid === 0) return;
  const budget = budgets.get(fid);
  if (budget === undefined || !(rss > beforeBytes + budget.actAtMiB * MIB)) return;
  end(fid, "grew the engine's process by " + Math.round((rss - beforeBytes) / MIB) + " MiB while it ran, past its memory limit of " + budget.memoryMiB + " MiB and the " + (budget.actAtMiB - budget.memoryMiB) + " MiB allowed besides (memory outside V8's heap counts too)");
}, memoryEveryMs);
let seen = -1;
let since = Date.now();
let ticked = since;
setInterval(() => {
  const fid = Atomics.load(state, 0);
  const frames = Atomics.load(state, 1);
  const now = Date.now();
  const stalled = now - ticked > 4 * everyMs;
  ticked = now;
  // A late tick means this thread was held too (the whole process stopped or starved): not the frame's doing.
  if (fid === 0 || frames !== seen || stalled) {
    seen = frames;
    since = now;
    return;
  }
  const limitMs = Atomics.load(state, 2);
  if (now - since <= limitMs + graceMs) return;
  end(fid, "ran on past its time limit of " + limitMs + " ms where V8 could not stop it");
}, everyMs);
`;

/**
 * Says at start how filters on this thread are held in memory (as logSandboxLaunch says it for the sandbox
 * processes): this process also holds the engine, so a call is held to its growth, not to a total.
 */
export function logInThreadMemory(log: { info: (fields: object, message: string) => void }): void {
  log.info(
    { memoryOverheadMiB: MEMORY_OVERHEAD_MIB, everyMs: WATCHDOG_EVERY_MS },
    `sandbox memory on the engine's thread: a filter's call may grow this process by its isolate's limit plus ${MEMORY_OVERHEAD_MIB} MiB over what it held when the call began; past that a watch thread kills the process and names the filter, whose stream and account then run their filters in the sandbox process (no cgroup or RLIMIT_AS holds it: see the sandbox memory line)`,
  );
}

/** What the lost file says: whose filter held or crashed the thread, and how. */
export interface LostFilter {
  label: string | null;
  reason: string;
}

/**
 * The filter a predecessor's in-thread sandbox named when it had to end (see InThreadSandbox), read
 * once: the file is removed, so a later start does not blame it again.
 */
export function takeLostFilter(lostFile: string): LostFilter | null {
  let text: string;
  try {
    text = readFileSync(lostFile, "utf8");
  } catch {
    return null;
  }
  rmSync(lostFile, { force: true });
  try {
    const lost = JSON.parse(text) as LostFilter;
    return typeof lost.reason === "string" ? lost : null;
  } catch {
    return null;
  }
}

/**
 * The sandbox (isolates.ts) on this thread: each call enters its filter's isolate with `applySync` and
 * the filter's time limit, so a batch costs a few microseconds instead of a round trip to the sandbox
 * process (40–235 µs). Only for a process that serves neither GraphQL nor the RPC proxy: the stream
 * engine in its own process (server/engine.ts), supervised by the service, which restarts it when it
 * dies. A runaway loop is stopped by the time limit and a memory bomb by the isolate's memory limit, each
 * failing its call; an isolate V8 lost control of ends this process: either V8 says so (see fatal), or
 * it holds the thread, and a watch on another thread sees the call overrun its limit and kills the
 * process. Either way the filter's label is written to `lostFile` first, so the successor knows whose
 * filter it was (see takeLostFilter); the service's supervisor restarts the process and its streams
 * retry their batches.
 */
export class InThreadSandbox extends SandboxHost {
  private runtime: IsolateRuntime | null = null;
  /**
   * Frames for the sandbox, handled one after another as the sandbox process's loop handles them: one
   * sent while another is handled (a helper's answer, a call sent by a call's outcome) waits its turn.
   */
  private readonly pending: Frame<ToHost>[] = [];
  private pumping = false;
  /** [filter id of the frame being handled (0: none), frames handled, its time limit], read by the watch. */
  private readonly state = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
  private watch: Worker | null = null;

  /**
   * `onLost`: V8 lost control of an isolate; the process must end (its supervisor starts a new one).
   * `lostFile`: where the culprit's label is written before this process ends (no watch without it).
   */
  constructor(
    private readonly onLost: (message: string) => void,
    private readonly lostFile?: string,
  ) {
    super("fast");
  }

  protected ensureStarted(): void {
    this.runtime ??= isolateRuntime({
      sync: true,
      send: (header, body) => this.onFrame(header, body ?? ""),
      keptBatch: (fid, rid) => this.kept.get(fid)?.find((k) => k.rid === rid)?.data,
      loop: { release: (frame) => this.pending.unshift(frame) },
    });
    if (this.lostFile && !this.watch) {
      this.watch = new Worker(WATCH_SOURCE, {
        eval: true,
        workerData: {
          state: this.state,
          lostFile: this.lostFile,
          graceMs: GRACE_MS,
          everyMs: WATCH_EVERY_MS,
          memoryEveryMs: WATCHDOG_EVERY_MS,
        },
      });
      this.watch.unref();
    }
  }

  protected override labelled(fid: number, label: string): void {
    this.watch?.postMessage({ fid, label });
  }

  /** The watch holds a call of this filter to memoryBudgetMiB of its limit, over what the process held before it. */
  protected override admitted(fid: number, memoryMiB: number): void {
    this.watch?.postMessage({ fid, memoryMiB, actAtMiB: memoryBudgetMiB([memoryMiB]) - UNSEEN_MIB });
  }

  override close(fid: number): void {
    if (this.admittedMiB.has(fid) || this.labels.has(fid)) this.watch?.postMessage({ fid, closed: true });
    super.close(fid);
  }

  protected send(header: ToHost, body?: string): void {
    const runtime = this.runtime;
    if (!runtime) return;
    this.pending.push({ header, body: body ?? "" });
    if (this.pumping) return;
    this.pumping = true;
    const state = this.state;
    try {
      for (;;) {
        runtime.afterCalls();
        const frame = this.pending.shift();
        if (!frame) break;
        const h = frame.header;
        // What the watch needs if this frame never returns: whose code it runs and under which limit.
        if (h.op === "run") {
          Atomics.store(state, 0, h.fid);
          Atomics.store(state, 2, h.timeoutMs);
        } else if (h.op === "open") {
          Atomics.store(state, 0, h.fid);
          Atomics.store(state, 2, Math.max(h.timeoutMs, OPEN_WATCH_MS));
        } else {
          const call = h.op === "close" ? undefined : this.calls.get(h.rid);
          Atomics.store(state, 0, call?.fid ?? 0);
          Atomics.store(state, 2, call?.timeoutMs ?? 0);
        }
        Atomics.add(state, 1, 1);
        runtime.dispatch(h, frame.body);
      }
    } finally {
      Atomics.store(state, 0, 0);
      this.pumping = false;
    }
  }

  protected busy(): void {}

  protected idle(): void {}

  /**
   * V8 says the isolate's memory and thread cannot be recovered (isolated-vm's onCatastrophicError): the
   * culprit is named in the lost file, the calls in flight fail and the process is told to end before it
   * runs anything more.
   */
  protected fatal(fid: number | null, message: string): void {
    if (this.lostFile)
      writeFileSync(
        this.lostFile,
        JSON.stringify({
          label: (fid !== null && this.labels.get(fid)) || null,
          reason: `made V8 lose control of its isolate (${message})`,
        } satisfies LostFilter),
      );
    this.failInFlight(fid, `V8 lost control of the filter's isolate (${message})`);
    this.onLost(message);
  }
}
