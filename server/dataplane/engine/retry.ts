/** A stream's failure that ends its run: the stream is paused or terminated with this reason. */
export class StreamFailure extends Error {
  constructor(
    message: string,
    /** The stream event the failure applies (see domains/streams/lifecycle.ts). */
    readonly event: "FAIL_PAUSE" | "FAIL_TERMINATE",
  ) {
    super(message);
  }
}

/** How often a batch is tried again and how long the runner waits in between (the destination's settings). */
export interface RetryPolicy {
  maxRetry: number;
  retryIntervalMs: number;
}

/** Why one attempt at a batch failed. */
export interface AttemptFailure {
  message: string;
  /** When the runner gives up on it, the stream is terminated (it cannot work as set up) instead of paused. */
  terminal: boolean;
  /** Trying again cannot help: give up at once, whatever retries are left. */
  final: boolean;
  /**
   * Not the stream's doing (its filter's call was failed with a sandbox another call crashed): tried
   * again without spending a retry, up to MAX_UNCOUNTED_FAILURES times a batch.
   */
  uncounted?: boolean;
}

/**
 * A batch's failures not of its own doing that are not counted; past them they count like any other, so
 * a sandbox that keeps failing for a cause nobody is blamed for (the kernel killing it) still ends in
 * the stream pausing.
 */
export const MAX_UNCOUNTED_FAILURES = 10;

export type AttemptResult<T, F extends AttemptFailure> = { ok: true; value: T } | { ok: false; failure: F };

/** After a failed attempt: wait and try again, or give up with this failure. */
export type RetryDecision = { retryInMs: number } | { giveUp: StreamFailure };

/**
 * The decision after attempt number `attempt` (from 1) failed: a batch is tried at most maxRetry + 1
 * times, retryIntervalMs apart; a final failure is not tried again.
 */
export function afterFailedAttempt(policy: RetryPolicy, attempt: number, failure: AttemptFailure): RetryDecision {
  if (!failure.final && attempt <= policy.maxRetry) return { retryInMs: policy.retryIntervalMs };
  return {
    giveUp: new StreamFailure(
      `${failure.message} (after ${attempt} attempt${attempt === 1 ? "" : "s"})`,
      failure.terminal ? "FAIL_TERMINATE" : "FAIL_PAUSE",
    ),
  };
}

/**
 * Runs `attempt` (given its number, from 1) until it succeeds, per {@link afterFailedAttempt}; between
 * attempts tells `retrying` (the attempts counted so far, and whether this one was) and waits with `wait`
 * (which may throw to stop). An uncounted failure is retried after the policy's interval without
 * counting. Throws the StreamFailure when it gives up.
 */
export async function withRetries<T, F extends AttemptFailure>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<AttemptResult<T, F>>,
  hooks: {
    retrying(failure: F, counted: number, uncounted: boolean): Promise<void>;
    wait(ms: number): Promise<void>;
  },
): Promise<T> {
  let counted = 0;
  let uncounted = 0;
  for (let n = 1; ; n++) {
    const result = await attempt(n);
    if (result.ok) return result.value;
    if (result.failure.uncounted && uncounted < MAX_UNCOUNTED_FAILURES) {
      uncounted++;
      await hooks.retrying(result.failure, counted, true);
      await hooks.wait(policy.retryIntervalMs);
      continue;
    }
    counted++;
    const decision = afterFailedAttempt(policy, counted, result.failure);
    if ("giveUp" in decision) throw decision.giveUp;
    await hooks.retrying(result.failure, counted, false);
    await hooks.wait(decision.retryInMs);
  }
}
