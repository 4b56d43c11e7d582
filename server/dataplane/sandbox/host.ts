/**
 * The sandbox process: runs the sandbox (isolates.ts) on behalf of the service that started it
 * (process.ts), over the pipe on fd 3 (frames.ts). It runs in its own process because V8 cannot always
 * recover from an isolate's out-of-memory (see isolates.ts): here that ends only this process; the service
 * restarts it and the callers get a clear error.
 *
 * Started with `node --no-node-snapshot` (isolated-vm on Node 20 needs it). Nothing here is reachable
 * from user code: the isolate sees only the bootstrap's console and qnLib.
 */
import { writeFileSync } from "node:fs";
import net from "node:net";
import {
  type Frame,
  type FromHost,
  readFrames,
  SyncFrameReader,
  type ToHost,
  writeFrame,
  writeFrameSync,
} from "./frames.ts";
import { isolateRuntime } from "./isolates.ts";

/**
 * Which of the service's sandbox processes this is (see process.ts):
 * - "fast" (calls with short limits: filters): one call at a time on this thread, and between calls it
 *   waits for the next frame in read(2), not in Node's event loop, which answers a call ~30 µs sooner.
 *   Nothing here needs the event loop: helper answers and expiries arrive as frames.
 * - "slow" (long limits: functions): calls run on isolated-vm's own threads, several at once, so one long
 *   call does not hold up the others; frames come through the event loop. The quarantine (the code of
 *   accounts whose code crashed a sandbox, any limit) runs as the slow one does.
 */
const FAST = process.argv[2] === "fast";
/**
 * An isolate's memory limit is checked as V8 collects, so tenants' heaps can pass their sizes for a while;
 * if the machine runs out of memory, the kernel ends this process (the service replaces it and its callers
 * get a clear error) before the service or its database. Raising one's own score needs no privilege.
 * (Not a lower CPU priority: time limits are wall-clock, so a busy service would fail tenants' runs with
 * TIMEOUT; see docs/decisions/0007-sandbox-confinement.md.)
 */
try {
  writeFileSync("/proc/self/oom_score_adj", "1000");
} catch {
  // Not Linux: no such score.
}
const PIPE_FD = 3;
const socket = FAST ? null : new net.Socket({ fd: PIPE_FD, readable: true, writable: true });
const frames = FAST ? new SyncFrameReader<ToHost>(PIPE_FD) : null;
/** Frames read while a call waited for a kept batch, and released waiting calls, handled in turn. */
const deferred: Frame<ToHost>[] = [];
const send = (header: FromHost, body?: string) =>
  socket ? writeFrame(socket, header, body) : writeFrameSync(PIPE_FD, header, body);

const runtime = isolateRuntime({
  sync: FAST,
  send,
  // The service has the text: it is asked for, and frames that come meanwhile are handled after the call.
  keptBatch(fid, rid) {
    if (!frames) return undefined;
    send({ op: "need", fid, rid });
    for (;;) {
      const frame = frames.next();
      if (!frame) process.exit(0);
      if (frame.header.op === "batch" && frame.header.rid === rid) return frame.header.found ? frame.body : undefined;
      deferred.push(frame);
    }
  },
  loop: frames ? { release: (frame) => deferred.unshift(frame) } : undefined,
});

send({ op: "ready" });
if (socket) {
  readFrames<ToHost>(socket, ({ header, body }) => runtime.dispatch(header, body));
  // The service went away: nothing is left to run for.
  socket.on("end", () => process.exit(0));
  socket.on("error", () => process.exit(0));
} else if (frames) {
  for (;;) {
    runtime.afterCalls();
    const frame = deferred.shift() ?? frames.next();
    if (!frame) break;
    runtime.dispatch(frame.header, frame.body);
  }
  process.exit(0);
}
