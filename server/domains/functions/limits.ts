import { conflict } from "../../platform/errors.ts";
import { planLimitsCatalogue } from "../catalogue/plan-limits.ts";

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

const catalogue = planLimitsCatalogue<PlanFunctionLimits>("function-limits.json");
export const PLAN_FUNCTION_LIMITS = catalogue.plans;
/** What an account without a plan the catalogue names gets (the Free plan's). */
export const fallbackFunctionLimits = catalogue.ofPlan(undefined);
export const functionLimitsOf = catalogue.ofAccount;

/** A new function would take the account past its plan's functions. */
export function checkFunctionCount(limits: PlanFunctionLimits, functionsAfter: number): void {
  if (functionsAfter > limits.functions)
    throw conflict(
      `Your plan allows ${limits.functions.toLocaleString("en-US")} functions, and this account has them. Delete one or upgrade your plan.`,
    );
}
