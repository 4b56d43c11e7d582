import type { FunctionInvoker } from "../../dataplane/destinations/types.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import { activate, type FunctionRuns, runErrorText } from "./service.ts";

/**
 * The functions runtime behind FUNCTION destinations: runs the stream account's function on each batch
 * and records the activation. A function that throws, times out or no longer exists, or a run past the
 * plan's GB-seconds, is a failed delivery (retried, then the stream pauses, like any destination).
 */
export function functionInvoker(db: Db, runs: FunctionRuns): FunctionInvoker {
  return {
    async invoke(call, payload, options) {
      try {
        const { run } = await activate(
          db,
          runs,
          call.accountId,
          call.functionId,
          payload,
          {
            source: call.test ? "TEST" : "STREAM",
            streamId: call.test ? undefined : call.streamId,
            network: call.network || undefined,
            dataset: call.dataset || undefined,
            blockNumber: call.blockNumber,
          },
          Math.max(1, Math.ceil(options.timeoutMs / 1000)),
        );
        if (run.success) return { ok: true, bytes: run.size };
        return {
          ok: false,
          message: runErrorText(run) ?? "the function failed",
          uncounted: run.sandboxLost === "bystander",
        };
      } catch (e) {
        if (e instanceof AppError && e.code === "NOT_FOUND")
          return { ok: false, message: "the function does not exist (it was deleted, or belongs to another account)" };
        // The plan's GB-seconds are used (billing.ts): a failed delivery saying so, retried like any other.
        if (e instanceof AppError && e.code === "CONFLICT") return { ok: false, message: e.message };
        // Too much function memory running at once (limits.ts RunCapacity): nothing ran; tried again uncounted.
        if (e instanceof AppError && e.code === "RATE_LIMITED")
          return { ok: false, message: e.message, uncounted: true };
        throw e;
      }
    },
  };
}
