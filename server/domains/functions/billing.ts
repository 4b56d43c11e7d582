import type { SandboxLoss } from "../../dataplane/sandbox/types.ts";
import type { Db, Executor } from "../../platform/db/index.ts";
import { conflict } from "../../platform/errors.ts";
import { currentBillingPeriod } from "../account/billing-period.ts";
import { functionLimitsOf, type PlanFunctionLimits } from "./limits.ts";
import * as store from "./store.ts";

/**
 * What functions cost, in one place: the GB-seconds each plan includes per billing period and the price
 * of those past them (schemas/catalogue/function-limits.json, read by limits.ts), the usage screen's bill, and the refusal
 * of runs past the included GB-seconds on a plan that sells none.
 */

/** What a billing period's GB-seconds cost under the plan: those past the included ones, priced per million. */
export function gbSecondCharge(limits: PlanFunctionLimits, gbSeconds: number) {
  const overage = Math.max(0, gbSeconds - limits.gbSecondsPerPeriod);
  const cents = limits.centsPerMillionGbSeconds;
  return {
    included: limits.gbSecondsPerPeriod,
    overage,
    /** US dollars, rounded to the cent as an invoice line is. */
    cost: cents === null ? 0 : Math.round((overage * cents) / 1e6) / 100,
    pricePerMillion: cents === null ? null : cents / 100,
  };
}

/**
 * A plan that sells no GB-seconds past its included ones refuses a run once they are used (CONFLICT),
 * as it refuses key-value writes: the run that crosses the line completes, the next one is refused.
 * Answers the plan's limits, which the run is held to.
 */
export async function checkRunAllowance(
  db: Executor,
  accountId: string,
  now = new Date(),
): Promise<PlanFunctionLimits> {
  const limits = await functionLimitsOf(db, accountId);
  if (limits.centsPerMillionGbSeconds !== null) return limits;
  const period = await currentBillingPeriod(db, accountId, now);
  const used = gbSecondsOf(await store.accountMbMs(db, accountId, period.start, period.end));
  if (used >= limits.gbSecondsPerPeriod)
    throw conflict(
      `Your plan includes ${limits.gbSecondsPerPeriod.toLocaleString("en-US")} GB-seconds of function runs per billing period, and they are used. Upgrade your plan to run functions again before the next period.`,
    );
  return limits;
}

/**
 * A run is billed its configured memory for its duration rounded up to the next millisecond, at least 1 ms
 * (AWS Lambda's rule since December 2020; Google Cloud Run functions round up to 100 ms). The product is
 * kept as an exact integer of MB-milliseconds; GB-seconds are that / 1024 / 1000. A run is billed at most
 * its time limit, as Lambda bills a timed-out run: one V8 could not stop ran on until the sandbox was
 * replaced (2 s later), and its time limit of 1 s was billed 3–5 s. A run failed only because another
 * call crashed the sandbox it shared (a bystander, see SandboxLoss) is not billed.
 */
export function billedMbMs(run: {
  memoryMb: number;
  durationMs: number;
  timeoutMs: number;
  sandboxLost?: SandboxLoss;
}): number {
  if (run.sandboxLost === "bystander") return 0;
  return run.memoryMb * Math.max(1, Math.min(Math.ceil(run.durationMs), run.timeoutMs));
}
export const gbSecondsOf = (mbMs: number) => mbMs / 1024 / 1000;

interface TimeWindow {
  start: Date;
  end: Date;
}

/**
 * The account's function runs in `window` (GB-seconds and runs, with points per UTC `tick`) and the bill of
 * `period`: its GB-seconds against the plan's included ones and what those past them cost.
 */
export async function gbSecondUsage(
  db: Db,
  accountId: string,
  args: { window: TimeWindow; period: TimeWindow; tick: "hour" | "day" },
) {
  const { window, period, tick } = args;
  const [points, periodMbMs, limits] = await Promise.all([
    store.accountUsage(db, accountId, window.start, window.end, tick),
    store.accountMbMs(db, accountId, period.start, period.end),
    functionLimitsOf(db, accountId),
  ]);
  const periodGbSeconds = gbSecondsOf(periodMbMs);
  const charge = gbSecondCharge(limits, periodGbSeconds);
  return {
    startTime: window.start,
    endTime: window.end,
    gbSeconds: gbSecondsOf(points.reduce((sum, p) => sum + p.mbMs, 0)),
    executions: points.reduce((sum, p) => sum + p.executions, 0),
    errors: points.reduce((sum, p) => sum + p.errors, 0),
    points: points.map((p) => ({ x: p.at, gbSeconds: gbSecondsOf(p.mbMs), executions: p.executions })),
    periodStart: period.start,
    periodEnd: period.end,
    periodGbSeconds,
    includedGbSeconds: charge.included,
    overageGbSeconds: charge.overage,
    pricePerMillion: charge.pricePerMillion,
    overageCost: charge.cost,
  };
}
