import { createHash } from "node:crypto";
import { type FilterInput, type FilterOptions, newFilter } from "./filter.ts";
import { DEFAULT_FILTER_LIMITS, type FilterOutcome } from "./types.ts";

/**
 * Warm isolates for functions: one per account, function and version (its code, calling convention
 * and limits), reused across calls like a warm function instance, so a call costs a call, not loading
 * the code. A new version gets a new isolate; the old one is dropped when unused for IDLE_MS or to make
 * room. Helpers are per account, so they are bound to the first call's.
 *
 * An isolate keeps its heap between calls, up to its memory limit, so what is kept is bounded by the sum
 * of the kept isolates' limits: HEAP_BUDGET_BYTES in all and ACCOUNT_SHARE_BYTES per account (and at
 * most MAX_WARM isolates). To keep a new one, the least recently used isolates that are not running a
 * call are dropped: the account's own first while it is past its share, then anyone's. An isolate
 * running a call is never dropped (disposing it would fail the call). When those running calls leave no
 * room, the new call runs in an isolate of its own, disposed as soon as it ends: a cold start, never a
 * refusal, so a paying account's stream keeps delivering while the sandbox is busy.
 */
const MAX_WARM = 200;
const IDLE_MS = 10 * 60_000;
/**
 * The machine has 24 GiB; the sandbox process also runs the calls in flight (each up to its own limit,
 * 1 GiB at most), the stream filters and tests of unsaved code, beside the service and its database. A
 * quarter of the machine for heaps kept between calls still keeps six of the largest functions (or 24
 * of the Free plan's largest) warm.
 */
const HEAP_BUDGET_BYTES = 6 * 1024 ** 3;
/**
 * One account may keep a sixth of the budget: one function of the largest size (1024 MB), or four of
 * the Free plan's (256 MB), so one account's many functions cannot push every other account's out. Its
 * other functions start cold (the code is loaded again, milliseconds), they do not fail.
 */
const ACCOUNT_SHARE_BYTES = 1024 ** 3;

/** What a kept isolate must do: a Filter (tests give fakes). */
export interface WarmFilter {
  run(input: FilterInput): Promise<FilterOutcome>;
  dispose(): void;
}

export interface WarmLimits {
  /** The sum of the memory limits of the isolates kept between calls. */
  heapBudgetBytes: number;
  /** The same for one account's. */
  accountShareBytes: number;
  /** Isolates kept at most. */
  maxKept: number;
  /** An isolate unused for this long is dropped. */
  idleMs: number;
}

export interface WarmKey {
  accountId: string;
  /** The function's id: its isolate is never shared with another function's. */
  functionId: string;
}

interface Kept {
  filter: WarmFilter;
  accountId: string;
  /** Its memory limit: what it may hold between calls. */
  bytes: number;
  /** Calls taken and not ended; while any, it is never dropped. */
  calls: number;
  lastUsed: number;
}

function keyOf(key: WarmKey, options: FilterOptions): string {
  const version = createHash("sha256")
    .update(JSON.stringify([options.source, options.version ?? null, options.limits ?? {}]))
    .digest("base64url");
  return `${key.accountId}\u0000${key.functionId}\u0000${version}`;
}

export class WarmIsolates {
  /** In order of use, least recent first (a Map keeps insertion order; a use moves the key to the end). */
  private readonly kept = new Map<string, Kept>();
  private heapBytes = 0;
  private readonly accountBytes = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly limits: WarmLimits,
    private readonly create: (options: FilterOptions) => WarmFilter = newFilter,
  ) {}

  /** Runs the function's code in its warm isolate (loading it on first use), or cold when there is no room. */
  async run(key: WarmKey, options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
    const k = keyOf(key, options);
    let entry = this.kept.get(k);
    if (entry) {
      this.kept.delete(k);
      this.kept.set(k, entry);
    } else {
      const bytes = options.limits?.memoryBytes ?? DEFAULT_FILTER_LIMITS.memoryBytes;
      if (!this.makeRoom(key.accountId, bytes)) return this.runCold(options, input);
      entry = { filter: this.create(options), accountId: key.accountId, bytes, calls: 0, lastUsed: Date.now() };
      this.keep(k, entry);
    }
    entry.calls++;
    try {
      return await entry.filter.run(input);
    } finally {
      entry.calls--;
      entry.lastUsed = Date.now();
    }
  }

  /** What is kept: isolates, the sum of their limits, and each account's sum. */
  usage() {
    return {
      isolates: this.kept.size,
      heapBytes: this.heapBytes,
      running: [...this.kept.values()].filter((e) => e.calls > 0).length,
      accountBytes: Object.fromEntries(this.accountBytes),
    };
  }

  private async runCold(options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
    const filter = this.create(options);
    try {
      return await filter.run(input);
    } finally {
      filter.dispose();
    }
  }

  /**
   * Drops idle isolates, least recently used first, until one of `bytes` fits the account's share and
   * the budget; drops none and answers false when the isolates running calls leave no room.
   */
  private makeRoom(accountId: string, bytes: number): boolean {
    const { heapBudgetBytes, accountShareBytes, maxKept } = this.limits;
    if (bytes > accountShareBytes || bytes > heapBudgetBytes) return false;
    const victims = new Map<string, Kept>();
    let accountNeed = (this.accountBytes.get(accountId) ?? 0) + bytes - accountShareBytes;
    let heapNeed = this.heapBytes + bytes - heapBudgetBytes;
    let countNeed = this.kept.size + 1 - maxKept;
    for (const [k, entry] of this.kept) {
      if (accountNeed <= 0) break;
      if (entry.accountId !== accountId || entry.calls > 0) continue;
      victims.set(k, entry);
      accountNeed -= entry.bytes;
      heapNeed -= entry.bytes;
      countNeed--;
    }
    if (accountNeed > 0) return false;
    for (const [k, entry] of this.kept) {
      if (heapNeed <= 0 && countNeed <= 0) break;
      if (entry.calls > 0 || victims.has(k)) continue;
      victims.set(k, entry);
      heapNeed -= entry.bytes;
      countNeed--;
    }
    if (heapNeed > 0 || countNeed > 0) return false;
    for (const [k, entry] of victims) this.drop(k, entry);
    return true;
  }

  private keep(k: string, entry: Kept): void {
    this.kept.set(k, entry);
    this.heapBytes += entry.bytes;
    this.accountBytes.set(entry.accountId, (this.accountBytes.get(entry.accountId) ?? 0) + entry.bytes);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), Math.min(this.limits.idleMs, 60_000));
      this.sweeper.unref();
    }
  }

  private drop(k: string, entry: Kept): void {
    this.kept.delete(k);
    this.heapBytes -= entry.bytes;
    const left = (this.accountBytes.get(entry.accountId) ?? 0) - entry.bytes;
    if (left > 0) this.accountBytes.set(entry.accountId, left);
    else this.accountBytes.delete(entry.accountId);
    entry.filter.dispose();
    if (this.kept.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Drops isolates unused for idleMs (never one running a call). */
  private sweep(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const [k, entry] of this.kept) if (entry.calls === 0 && entry.lastUsed <= before) this.drop(k, entry);
  }
}

const warm = new WarmIsolates({
  heapBudgetBytes: HEAP_BUDGET_BYTES,
  accountShareBytes: ACCOUNT_SHARE_BYTES,
  maxKept: MAX_WARM,
  idleMs: IDLE_MS,
});

/** Runs the function's code in its warm isolate (see WarmIsolates). */
export function runWarm(key: WarmKey, options: FilterOptions, input: FilterInput): Promise<FilterOutcome> {
  return warm.run(key, options, input);
}
