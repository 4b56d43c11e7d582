import { describe, expect, it } from "vitest";
import {
  type AttemptFailure,
  type AttemptResult,
  afterFailedAttempt,
  MAX_UNCOUNTED_FAILURES,
  StreamFailure,
  withRetries,
} from "../../../server/dataplane/engine/retry.ts";

const failure = (over: Partial<AttemptFailure> = {}): AttemptFailure => ({
  message: "HTTP 500",
  terminal: false,
  final: false,
  ...over,
});

describe("afterFailedAttempt", () => {
  it.each([
    { name: "retries while attempts are left", maxRetry: 3, attempt: 1, f: failure(), decision: { retryInMs: 250 } },
    { name: "the last retry is still made", maxRetry: 3, attempt: 3, f: failure(), decision: { retryInMs: 250 } },
    {
      name: "pauses after maxRetry + 1 attempts",
      maxRetry: 3,
      attempt: 4,
      f: failure(),
      decision: { giveUp: { message: "HTTP 500 (after 4 attempts)", event: "FAIL_PAUSE" } },
    },
    {
      name: "no retries: gives up after the first attempt",
      maxRetry: 0,
      attempt: 1,
      f: failure(),
      decision: { giveUp: { message: "HTTP 500 (after 1 attempt)", event: "FAIL_PAUSE" } },
    },
    {
      name: "a terminal failure is retried, then terminates",
      maxRetry: 2,
      attempt: 1,
      f: failure({ terminal: true }),
      decision: { retryInMs: 250 },
    },
    {
      name: "a terminal failure terminates once the retries are spent",
      maxRetry: 2,
      attempt: 3,
      f: failure({ terminal: true }),
      decision: { giveUp: { message: "HTTP 500 (after 3 attempts)", event: "FAIL_TERMINATE" } },
    },
    {
      name: "a final failure gives up at once",
      maxRetry: 5,
      attempt: 1,
      f: failure({ message: "SYNTAX", terminal: true, final: true }),
      decision: { giveUp: { message: "SYNTAX (after 1 attempt)", event: "FAIL_TERMINATE" } },
    },
  ])("$name", ({ maxRetry, attempt, f, decision }) => {
    const got = afterFailedAttempt({ maxRetry, retryIntervalMs: 250 }, attempt, f);
    if ("giveUp" in decision) {
      expect("giveUp" in got && got.giveUp).toBeInstanceOf(StreamFailure);
      expect("giveUp" in got && { message: got.giveUp.message, event: got.giveUp.event }).toEqual(decision.giveUp);
    } else expect(got).toEqual(decision);
  });
});

describe("withRetries", () => {
  /** An attempt that fails with these failures in turn, then succeeds with the attempt's number. */
  function scripted(failures: AttemptFailure[]) {
    const calls: number[] = [];
    const attempt = async (n: number): Promise<AttemptResult<number, AttemptFailure>> => {
      calls.push(n);
      const f = failures[n - 1];
      return f ? { ok: false, failure: f } : { ok: true, value: n };
    };
    return { calls, attempt };
  }

  function recordingHooks() {
    const events: string[] = [];
    return {
      events,
      hooks: {
        retrying: async (f: AttemptFailure, n: number, uncounted: boolean) => {
          events.push(`retrying ${n}${uncounted ? " (uncounted)" : ""}: ${f.message}`);
        },
        wait: async (ms: number) => {
          events.push(`wait ${ms}`);
        },
      },
    };
  }

  it("returns the first success, telling and waiting between attempts", async () => {
    const { calls, attempt } = scripted([failure({ message: "a" }), failure({ message: "b" })]);
    const { events, hooks } = recordingHooks();
    await expect(withRetries({ maxRetry: 3, retryIntervalMs: 10 }, attempt, hooks)).resolves.toBe(3);
    expect(calls).toEqual([1, 2, 3]);
    expect(events).toEqual(["retrying 1: a", "wait 10", "retrying 2: b", "wait 10"]);
  });

  it("gives up with a StreamFailure after maxRetry + 1 attempts, with no wait after the last", async () => {
    const { calls, attempt } = scripted([failure(), failure(), failure()]);
    const { events, hooks } = recordingHooks();
    const run = withRetries({ maxRetry: 2, retryIntervalMs: 0 }, attempt, hooks);
    await expect(run).rejects.toThrow(StreamFailure);
    await expect(run).rejects.toMatchObject({ message: "HTTP 500 (after 3 attempts)", event: "FAIL_PAUSE" });
    expect(calls).toEqual([1, 2, 3]);
    expect(events.filter((e) => e.startsWith("wait"))).toHaveLength(2);
  });

  it("retries a failure not of the stream's doing without spending a retry", async () => {
    const lost = failure({ message: "sandbox restarted", uncounted: true });
    const { calls, attempt } = scripted([lost, lost, failure({ message: "a" }), lost]);
    const { events, hooks } = recordingHooks();
    // maxRetry 1: two counted attempts at most; the three uncounted failures spend none of them.
    await expect(withRetries({ maxRetry: 1, retryIntervalMs: 5 }, attempt, hooks)).resolves.toBe(5);
    expect(calls).toEqual([1, 2, 3, 4, 5]);
    expect(events).toEqual([
      "retrying 0 (uncounted): sandbox restarted",
      "wait 5",
      "retrying 0 (uncounted): sandbox restarted",
      "wait 5",
      "retrying 1: a",
      "wait 5",
      "retrying 1 (uncounted): sandbox restarted",
      "wait 5",
    ]);
  });

  it("counts uncounted failures once a batch has had MAX_UNCOUNTED_FAILURES of them", async () => {
    const lost = failure({ message: "sandbox restarted", uncounted: true });
    const { calls, attempt } = scripted(Array.from({ length: MAX_UNCOUNTED_FAILURES + 5 }, () => lost));
    const run = withRetries({ maxRetry: 1, retryIntervalMs: 0 }, attempt, recordingHooks().hooks);
    await expect(run).rejects.toMatchObject({ message: "sandbox restarted (after 2 attempts)", event: "FAIL_PAUSE" });
    expect(calls).toHaveLength(MAX_UNCOUNTED_FAILURES + 2);
  });

  it("stops when waiting throws (the runner was stopped)", async () => {
    const { calls, attempt } = scripted([failure(), failure()]);
    const stopped = new Error("stopped");
    const run = withRetries({ maxRetry: 5, retryIntervalMs: 0 }, attempt, {
      retrying: async () => {},
      wait: () => Promise.reject(stopped),
    });
    await expect(run).rejects.toBe(stopped);
    expect(calls).toEqual([1]);
  });
});
