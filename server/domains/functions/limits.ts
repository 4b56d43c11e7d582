import { AppError, badInput, conflict } from "../../platform/errors.ts";
import { planLimitsCatalogue } from "../catalogue/plan-limits.ts";

/**
 * Every per-plan limit of functions, in one place (schemas/catalogue/function-limits.json): how many
 * functions an account may have, how long run logs are kept, the largest memory size and time limit a
 * function may have, its share of the runtime's memory and cores (RunCapacity), and the GB-seconds a billing
 * period includes and their price (billing.ts prices them). Each check answers with the limit in words.
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
  /** The longest time limit (s) a function may have (see checkTimeout). */
  maxTimeoutSec: number;
  /** MB of function memory the account may have running at once (see RunCapacity). */
  runningMemoryMb: number;
  /** Runs the account may have running at once: its share of the cores (see RunCapacity). */
  runningRuns: number;
  /** MB all accounts of the plan together may have running at once; null: no pool of their own. */
  poolMb: number | null;
  /** Runs all accounts of the plan together may have running at once; null: no pool of their own. */
  poolRuns: number | null;
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

/** A time limit past the plan's longest is refused on the field that gives it, naming the longest. */
export function checkTimeout(limits: PlanFunctionLimits, timeoutSec: number | undefined, pointer: string): void {
  if (timeoutSec !== undefined && timeoutSec > limits.maxTimeoutSec)
    throw badInput([
      {
        pointer,
        message: `Your plan allows functions up to ${limits.maxTimeoutSec} s. Choose ${limits.maxTimeoutSec} s or less, or upgrade your plan.`,
      },
    ]);
}

/**
 * MB of function memory running at once across all accounts: half the machine's 24 GiB. Each run may
 * fill its memory size, and the sandbox process holds them beside the warm heaps (warm.ts), the service
 * and its database; past this the kernel, not a limit, would end them.
 */
export const RUNNING_MEMORY_MB_TOTAL = 12 * 1024;

/**
 * The queue of runs waiting for the runtime's capacity (their plan's pool, or RUNNING_MEMORY_MB_TOTAL):
 * at most `perAccount` of one account's and `total` in all wait, each at most `waitMs`; a run past the
 * queue's bounds, or still waiting at the end of its wait, is refused with RATE_LIMITED saying so. An
 * account past its own share (runningMemoryMb, runningRuns) is refused at once instead: waiting would
 * only hold its caller for what it chose to run.
 */
export const RUN_QUEUE = { perAccount: 8, total: 256, waitMs: 10_000 } as const;

interface Running {
  mb: number;
  runs: number;
}
const none = (): Running => ({ mb: 0, runs: 0 });

function count<K>(map: Map<K, Running>, key: K, mb: number, runs: number): void {
  const r = map.get(key) ?? none();
  r.mb += mb;
  r.runs += runs;
  if (r.runs > 0) map.set(key, r);
  else map.delete(key);
}

interface Waiting {
  limits: PlanFunctionLimits;
  memoryMb: number;
  accountId: string;
  start: () => void;
}

/** A function that does its work the first time it is called only. */
function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

/**
 * The functions runtime's capacity in one process (which runs every function it starts): the runs running
 * and waiting per account, per plan and in all, and the queue of those waiting. One per process, made at
 * composition (functions/service.ts FunctionRuns), so two services in one process do not share it.
 */
export class RunCapacity {
  /** Per account, its runs running or waiting (its share counts both, so it cannot queue past it). */
  private readonly byAccount = new Map<string, Running>();
  /** Per plan (its limits object, one per plan in the catalogue), its accounts' runs running. */
  private readonly byPool = new Map<PlanFunctionLimits, Running>();
  /** All runs running. */
  private readonly total = none();
  private readonly queue: Waiting[] = [];

  /** Whether the runtime's capacity (the plan's pool and RUNNING_MEMORY_MB_TOTAL) holds one more run of memoryMb. */
  private capacityFor(limits: PlanFunctionLimits, memoryMb: number): boolean {
    if (this.total.mb + memoryMb > RUNNING_MEMORY_MB_TOTAL) return false;
    const pool = this.byPool.get(limits) ?? none();
    if (limits.poolMb !== null && pool.mb + memoryMb > limits.poolMb) return false;
    return limits.poolRuns === null || pool.runs < limits.poolRuns;
  }

  /** Starts the waiting runs that now fit, oldest first; one that does not fit lets later ones (of other pools) by. */
  private startWaiting(): void {
    for (let i = 0; i < this.queue.length; ) {
      const w = this.queue[i];
      if (this.capacityFor(w.limits, w.memoryMb)) {
        this.queue.splice(i, 1);
        w.start();
      } else i++;
    }
  }

  /**
   * Admits a run of `memoryMb` for the account; resolves to the release, to call once the run ended.
   * Refused at once with RATE_LIMITED past the account's own share (its plan's runningMemoryMb and
   * runningRuns: nothing ran, try again when a run ends); past the runtime's capacity for its plan (the
   * plan's pool, RUNNING_MEMORY_MB_TOTAL) it waits in RUN_QUEUE, refused with RATE_LIMITED past the queue's
   * bounds or when its wait ends.
   */
  async admit(
    accountId: string,
    limits: PlanFunctionLimits,
    memoryMb: number,
    waitMs: number = RUN_QUEUE.waitMs,
  ): Promise<() => void> {
    const account = this.byAccount.get(accountId) ?? none();
    if (account.mb + memoryMb > limits.runningMemoryMb)
      throw new AppError(
        "RATE_LIMITED",
        `This account is running ${account.mb} MB of functions at once and its plan allows ${limits.runningMemoryMb} MB; this ${memoryMb} MB run would pass it. Try again when a run ends, or upgrade your plan.`,
      );
    if (account.runs >= limits.runningRuns)
      throw new AppError(
        "RATE_LIMITED",
        `This account is running ${account.runs} functions at once and its plan allows ${limits.runningRuns}. Try again when a run ends, or upgrade your plan.`,
      );
    count(this.byAccount, accountId, memoryMb, 1);
    const leaveShare = once(() => count(this.byAccount, accountId, -memoryMb, -1));
    const start = () => {
      count(this.byPool, limits, memoryMb, 1);
      this.total.mb += memoryMb;
      this.total.runs += 1;
    };
    const release = once(() => {
      count(this.byPool, limits, -memoryMb, -1);
      this.total.mb -= memoryMb;
      this.total.runs -= 1;
      leaveShare();
      this.startWaiting();
    });
    if (this.capacityFor(limits, memoryMb)) {
      start();
      return release;
    }
    const queue = this.queue;
    const waitingOfAccount = queue.filter((w) => w.accountId === accountId).length;
    if (waitingOfAccount >= RUN_QUEUE.perAccount || queue.length >= RUN_QUEUE.total) {
      leaveShare();
      throw new AppError(
        "RATE_LIMITED",
        `The functions runtime is running all it holds for this plan, and ${queue.length} runs wait for it (${waitingOfAccount} of this account's, at most ${RUN_QUEUE.perAccount}). Nothing ran. Try again in a moment.`,
      );
    }
    return new Promise<() => void>((resolve, reject) => {
      const waiting: Waiting = {
        limits,
        memoryMb,
        accountId,
        start: () => {
          clearTimeout(timer);
          start();
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(waiting), 1);
        leaveShare();
        reject(
          new AppError(
            "RATE_LIMITED",
            `The functions runtime stayed full for the ${waitMs / 1000} s this run waited for it; nothing ran. Try again in a moment.`,
          ),
        );
      }, waitMs);
      queue.push(waiting);
    });
  }
}
