import { readFileSync } from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Executor } from "../../platform/db/index.ts";
import { conflict } from "../../platform/errors.ts";
import { subscriptions } from "../account/tables.ts";

/**
 * Every per-plan limit of functions, in one place (schemas/catalogue/function-limits.json): how many
 * functions an account may have, how long run logs are kept, and the GB-seconds a billing period includes
 * and their price (billing.ts prices them). Each check answers with the limit in words.
 */

export interface PlanFunctionLimits {
  /** Functions one account may have. */
  functions: number;
  /** Days a run's console lines are kept (see pruneRunLogs). */
  logRetentionDays: number;
  /** GB-seconds included in a billing period. */
  gbSecondsPerPeriod: number;
  /** The price of a million GB-seconds past the included ones; null: runs past them are refused. */
  centsPerMillionGbSeconds: number | null;
}

const limitsFile = path.resolve(import.meta.dirname, "../../../schemas/catalogue/function-limits.json");
export const PLAN_FUNCTION_LIMITS = (
  JSON.parse(readFileSync(limitsFile, "utf8")) as { plans: Record<string, PlanFunctionLimits> }
).plans;
export const FALLBACK_PLAN = "b6_free";

export async function functionLimitsOf(db: Executor, accountId: string): Promise<PlanFunctionLimits> {
  const [row] = await db
    .select({ planId: subscriptions.planId })
    .from(subscriptions)
    .where(eq(subscriptions.accountId, accountId));
  return PLAN_FUNCTION_LIMITS[row?.planId ?? FALLBACK_PLAN] ?? PLAN_FUNCTION_LIMITS[FALLBACK_PLAN];
}

/** A new function would take the account past its plan's functions. */
export function checkFunctionCount(limits: PlanFunctionLimits, functionsAfter: number): void {
  if (functionsAfter > limits.functions)
    throw conflict(
      `Your plan allows ${limits.functions.toLocaleString("en-US")} functions, and this account has them. Delete one or upgrade your plan.`,
    );
}
