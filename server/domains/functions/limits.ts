import { AppError, badInput, conflict } from "../../platform/errors.ts";
import { planLimitsCatalogue } from "../catalogue/plan-limits.ts";

/**
 * Every per-plan limit of functions, in one place (schemas/catalogue/function-limits.json): how many
 * functions an account may have, how long run logs are kept, the largest memory size a function may
 * have, and the GB-seconds a billing period includes and their price (billing.ts prices them). Each check
 * answers with the limit in words.
 */

/** The memory sizes a function may have (MB): 128 to 1024 in steps of 128, as the function entity schema says. */
export const FUNCTION_MEMORY_SIZES_MB = [128, 256, 384, 512, 640, 768, 896, 1024] as const;

export interface PlanFunctionLimits {
  /** Functions one account may have. */
  functions: number;
  /** Days a run's console lines are kept (see pruneRunLogs). */
  logRetentionDays: number;
  /** The largest memory size (MB) a function may have, one of FUNCTION_MEMORY_SIZES_MB. */
  maxMemoryMb: number;
  /** MB of function memory the account may have running at once (see admitRun). */
  runningMemoryMb: number;
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

/** The memory sizes the plan allows, smallest first (functionPermissions.memorySizes). */
export const memorySizesOf = (limits: PlanFunctionLimits): number[] =>
  FUNCTION_MEMORY_SIZES_MB.filter((mb) => mb <= limits.maxMemoryMb);

/** A memory size past the plan's largest is refused on the field that gives it, naming the largest. */
export function checkMemorySize(limits: PlanFunctionLimits, memoryMb: number | undefined, pointer: string): void {
  if (memoryMb !== undefined && memoryMb > limits.maxMemoryMb)
    throw badInput([
      {
        pointer,
        message: `Your plan allows functions up to ${limits.maxMemoryMb} MB of memory. Choose ${limits.maxMemoryMb} MB or less, or upgrade your plan.`,
      },
    ]);
}

/**
 * MB of function memory running at once across all accounts: half the machine's 24 GiB. Each run may
 * fill its memory size, and the sandbox process holds them beside the warm heaps (warm.ts), the service
 * and its database; past this the kernel, not a limit, would end them.
 */
export const RUNNING_MEMORY_MB_TOTAL = 12 * 1024;

/** MB of memory of the runs now running, per account and in all (this process runs every function). */
const runningMb = new Map<string, number>();
let runningMbTotal = 0;

/**
 * Admits a run of `memoryMb` for the account, or refuses it with RATE_LIMITED when the account's plan's
 * runningMemoryMb or RUNNING_MEMORY_MB_TOTAL would be passed (nothing ran: try again when a run ends).
 * Returns the release, to call once the run ended.
 */
export function admitRun(accountId: string, limits: PlanFunctionLimits, memoryMb: number): () => void {
  const account = runningMb.get(accountId) ?? 0;
  if (account + memoryMb > limits.runningMemoryMb)
    throw new AppError(
      "RATE_LIMITED",
      `This account is running ${account} MB of functions at once and its plan allows ${limits.runningMemoryMb} MB; this ${memoryMb} MB run would pass it. Try again when a run ends, or upgrade your plan.`,
    );
  if (runningMbTotal + memoryMb > RUNNING_MEMORY_MB_TOTAL)
    throw new AppError(
      "RATE_LIMITED",
      "The functions runtime is running all the function memory it holds at once. Try again in a moment.",
    );
  runningMb.set(accountId, account + memoryMb);
  runningMbTotal += memoryMb;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    runningMbTotal -= memoryMb;
    const left = (runningMb.get(accountId) ?? 0) - memoryMb;
    if (left > 0) runningMb.set(accountId, left);
    else runningMb.delete(accountId);
  };
}
