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
}

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
 * attempts tells `retrying` and waits with `wait` (which may throw to stop). Throws the StreamFailure
 * when it gives up.
 */
export async function withRetries<T, F extends AttemptFailure>(
  policy: RetryPolicy,
  attempt: (n: number) => Promise<AttemptResult<T, F>>,
  hooks: { retrying(failure: F, attempt: number): Promise<void>; wait(ms: number): Promise<void> },
): Promise<T> {
  for (let n = 1; ; n++) {
    const result = await attempt(n);
    if (result.ok) return result.value;
    const decision = afterFailedAttempt(policy, n, result.failure);
    if ("giveUp" in decision) throw decision.giveUp;
    await hooks.retrying(result.failure, n);
    await hooks.wait(decision.retryInMs);
  }
}
