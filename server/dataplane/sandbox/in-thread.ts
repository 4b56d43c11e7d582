import type { Frame, ToHost } from "./frames.ts";
import { type IsolateRuntime, isolateRuntime } from "./isolates.ts";
import { SandboxHost } from "./process.ts";

/**
 * The sandbox (isolates.ts) on this thread: each call enters its filter's isolate with `applySync` and
 * the filter's time limit, so a batch costs a few microseconds instead of a round trip to the sandbox
 * process (40–235 µs). Only for a process that serves neither GraphQL nor the RPC proxy: the stream
 * engine in its own process (server/engine.ts), supervised by the service, which restarts it when it
 * dies. A runaway loop is stopped by the time limit and a memory bomb by the isolate's memory limit, each
 * failing its call; an isolate V8 lost control of ends this process (see fatal), and the service's
 * supervisor restarts it and its streams retry their batches.
 */
export class InThreadSandbox extends SandboxHost {
  private runtime: IsolateRuntime | null = null;
  /**
   * Frames for the sandbox, handled one after another as the sandbox process's loop handles them: one
   * sent while another is handled (a helper's answer, a call sent by a call's outcome) waits its turn.
   */
  private readonly pending: Frame<ToHost>[] = [];
  private pumping = false;

  /** `onLost`: V8 lost control of an isolate; the process must end (its supervisor starts a new one). */
  constructor(private readonly onLost: (message: string) => void) {
    super("fast");
  }

  protected ensureStarted(): void {
    this.runtime ??= isolateRuntime({
      sync: true,
      send: (header, body) => this.onFrame(header, body ?? ""),
      keptBatch: (fid, rid) => this.kept.get(fid)?.find((k) => k.rid === rid)?.data,
      loop: { release: (frame) => this.pending.unshift(frame) },
    });
  }

  protected send(header: ToHost, body?: string): void {
    const runtime = this.runtime;
    if (!runtime) return;
    this.pending.push({ header, body: body ?? "" });
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        runtime.afterCalls();
        const frame = this.pending.shift();
        if (!frame) break;
        runtime.dispatch(frame.header, frame.body);
      }
    } finally {
      this.pumping = false;
    }
  }

  protected busy(): void {}

  protected idle(): void {}

  /**
   * V8 says the isolate's memory and thread cannot be recovered (isolated-vm's onCatastrophicError): the
   * calls in flight fail and the process is told to end before it runs anything more.
   */
  protected fatal(fid: number | null, message: string): void {
    this.failInFlight(fid, `V8 lost control of the filter's isolate (${message})`);
    this.onLost(message);
  }
}
