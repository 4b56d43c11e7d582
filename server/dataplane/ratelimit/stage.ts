import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { DomainEvents } from "../../platform/events.ts";
import { retryAfterSeconds } from "../proxy/admission.ts";
import type { Refusal } from "../proxy/jsonrpc.ts";
import type { ProxyRequestInfo, RateDecision, RateLimitStage } from "../proxy/stages.ts";

/** The JSON-RPC code of a call refused by a rate limit (the HTTP status is 429). */
export const RATE_LIMITED_CODE = -32029;

/**
 * One limit the stage enforces. What limits there are and what they mean (plan RPS, bucket overrides,
 * rate limiters) are the rate-limit rules of server/domains/ratelimits, which supply the LimitSource.
 */
export interface Limit {
  /** null: every method. */
  methods: readonly string[] | null;
  /** Counted per client IP instead of once for the key. */
  perIp: boolean;
  limit: number;
  /** How long a count lasts from the first call it counts; with `window`, the longest a window lasts. */
  seconds: number;
  /**
   * A calendar the domain keeps (an account's billing period), instead of windows from the first call:
   * given a time, the window it falls in. The count starts again at each window's start.
   */
  window?: (nowMs: number) => { startMs: number; endMs: number };
  /** The counter key without the client IP. */
  key: string;
  /** What the refusal names. */
  describe: string;
  /** The refusal's JSON-RPC error data. */
  data: Record<string, unknown>;
}

/** A limit compiled for the hot path. */
interface Rule extends Omit<Limit, "methods"> {
  methods: Set<string> | null;
  /** The window of `window` last asked for, kept until the clock leaves it. */
  current?: { startMs: number; endMs: number };
}

/**
 * The counter of a rule for a call now: its key (per window, with a window), how long a new count lasts
 * (whole seconds, as the stores keep it) and, with a window, the ms left in it (when to retry).
 */
function counterOf(
  rule: Rule,
  clientIp: string,
): { key: string; seconds?: number; windowLeftMs?: number; windowEndMs?: number } {
  const key = rule.perIp ? `${rule.key}:${clientIp}` : rule.key;
  if (!rule.window) return { key };
  const now = Date.now();
  let current = rule.current;
  if (!current || now < current.startMs || now >= current.endMs) {
    current = rule.window(now);
    rule.current = current;
  }
  const windowLeftMs = current.endMs - now;
  return {
    key: `${key}:${current.startMs}`,
    seconds: Math.max(1, Math.ceil(windowLeftMs / 1000)),
    windowLeftMs,
    windowEndMs: current.endMs,
  };
}

/** How often ended windows' counts are dropped from memory. */
const WINDOW_SWEEP_MS = 60_000;

/**
 * The counts of windowed rules (an add-on plan's requests a billing period) in this process's memory.
 * rate-limiter-flexible's memory store ends each count with a timer, and Node's timers hold at most
 * 24.8 days: a count made early in a 30-day period ended after 1 ms, so a month's requests were never
 * refused then. A key names its window, so its count lives until the window ends; ended ones are swept.
 */
class WindowCounts {
  private readonly counts = new Map<string, { endMs: number; consumed: number }>();
  private nextSweepMs = 0;

  add(key: string, points: number, endMs: number): Count {
    const now = Date.now();
    if (now >= this.nextSweepMs) {
      for (const [each, count] of this.counts) if (count.endMs <= now) this.counts.delete(each);
      this.nextSweepMs = now + WINDOW_SWEEP_MS;
    }
    let count = this.counts.get(key);
    if (!count || count.endMs <= now) {
      count = { endMs, consumed: 0 };
      this.counts.set(key, count);
    }
    count.consumed += points;
    return { consumed: count.consumed, msBeforeNext: count.endMs - now };
  }
}

/** A count whose window ends before its stored count expires: retry when the window ends. */
const withinWindow = (count: Count | null, windowLeftMs: number | undefined): Count | null =>
  count && windowLeftMs !== undefined && count.msBeforeNext > windowLeftMs
    ? { consumed: count.consumed, msBeforeNext: windowLeftMs }
    : count;

const ruleOf = (limit: Limit): Rule => ({ ...limit, methods: limit.methods ? new Set(limit.methods) : null });

export type LimitScope = { accountId: string; endpointId: string };

/** Where the stage reads what to enforce (the port the rate-limits domain fills from the database). */
export interface LimitSource {
  /** Every account's limit (null: none) and every endpoint's limits, by id. */
  all(): Promise<{ accounts: Map<string, Limit | null>; endpoints: Map<string, Limit[]> }>;
  /** One account's limit (an account created since the last full load). */
  account(accountId: string): Promise<Limit | null>;
  /** One endpoint's limits and its account's, after a change. */
  endpoint(scope: LimitScope): Promise<{ account: Limit | null; endpoint: Limit[] }>;
}

export interface RateLimitStageOptions {
  source: LimitSource;
  events?: DomainEvents;
  /** Counters in Redis (shared by every process using it); in this process's memory when absent. */
  redis?: Redis;
  /** Prefix of the Redis keys, so several deployments or tests can share one server. */
  keyPrefix?: string;
  /** How often the whole configuration is reloaded, for changes made by other processes (ms). */
  refreshMs?: number;
  log?: Logger;
}

/**
 * The proxy's rate-limit stage: the account's plan RPS, the endpoint's bucket overrides and its rate
 * limiters, counted with rate-limiter-flexible (in memory, or in Redis so processes share counts).
 * Configuration is held in memory: loaded at start, reloaded for one endpoint on `ratelimits.changed`
 * (from this process, or relayed from another), and reloaded whole on `relay.resynced` and every
 * `refreshMs` (plan changes reach it that way).
 */
export class FlexibleRateLimitStage implements RateLimitStage {
  private accounts = new Map<string, Rule | null>();
  private endpoints = new Map<string, Rule[]>();
  private limiters = new Map<string, RateLimiterAbstract>();
  private readonly windowCounts = new WindowCounts();
  private pendingAccounts = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private unsubscribes: (() => void)[] = [];
  private readonly keyPrefix: string;

  constructor(private readonly options: RateLimitStageOptions) {
    this.keyPrefix = options.keyPrefix ?? "np:rl";
  }

  /** Loads the configuration and starts following changes. */
  async start(): Promise<this> {
    await this.reloadAll();
    const reloadFailed = (error: unknown) => this.options.log?.error({ err: error }, "rate limits: reload failed");
    const events = this.options.events;
    if (events)
      this.unsubscribes = [
        // Returned, so a change emitted with emitAndWait answers only once it is in force here.
        events.on("ratelimits.changed", (scope) => this.reloadEndpoint(scope).catch(reloadFailed)),
        events.on("relay.resynced", () => void this.reloadAll().catch(reloadFailed)),
      ];
    const refreshMs = this.options.refreshMs ?? 30_000;
    if (refreshMs > 0) {
      this.timer = setInterval(() => void this.reloadAll().catch(reloadFailed), refreshMs);
      this.timer.unref();
    }
    return this;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribes) unsubscribe();
  }

  async reloadAll(): Promise<void> {
    const all = await this.options.source.all();
    const accounts = new Map<string, Rule | null>();
    for (const [accountId, limit] of all.accounts) accounts.set(accountId, limit && ruleOf(limit));
    const endpoints = new Map<string, Rule[]>();
    for (const [endpointId, limits] of all.endpoints) endpoints.set(endpointId, limits.map(ruleOf));
    this.accounts = accounts;
    this.endpoints = endpoints;
  }

  async reloadEndpoint(scope: LimitScope): Promise<void> {
    const limits = await this.options.source.endpoint(scope);
    this.accounts.set(scope.accountId, limits.account && ruleOf(limits.account));
    this.endpoints.set(scope.endpointId, limits.endpoint.map(ruleOf));
  }

  /** An account created since the last reload: its limit is loaded in the background. */
  private loadAccount(accountId: string): void {
    if (this.pendingAccounts.has(accountId)) return;
    this.pendingAccounts.add(accountId);
    this.options.source
      .account(accountId)
      .then((limit) => this.accounts.set(accountId, limit && ruleOf(limit)))
      .catch((error) => this.options.log?.error({ err: error }, "rate limits: account load failed"))
      .finally(() => this.pendingAccounts.delete(accountId));
  }

  private limiterFor(limit: number, seconds: number, insured: boolean): RateLimiterAbstract {
    const id = `${limit}/${seconds}/${insured}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = countingLimiter({ limit, seconds, keyPrefix: this.keyPrefix, redis: this.options.redis, insured });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  admit(request: ProxyRequestInfo): undefined | RateDecision | Promise<undefined | RateDecision> {
    const methods = request.methods;
    if (methods.length === 0) return undefined;
    const record = request.endpoint.record;
    let account = this.accounts.get(record.accountId);
    if (account === undefined) {
      this.loadAccount(record.accountId);
      account = null;
    }
    const rules = this.endpoints.get(record.id);
    if (!account && !rules) return undefined;
    const applied: Rule[] = account ? [account] : [];
    if (rules) for (const r of rules) applied.push(r);
    return this.consume(applied, methods, request.clientIp);
  }

  private consume(
    rules: Rule[],
    methods: string[],
    clientIp: string,
  ): undefined | RateDecision | Promise<undefined | RateDecision> {
    const counts: (Count | null)[] = [];
    let pending = false;
    const results: (Count | null | Promise<Count | null>)[] = rules.map((rule) => {
      const points = rule.methods ? countMatching(rule.methods, methods) : methods.length;
      if (points === 0) return null;
      const { key, seconds, windowLeftMs, windowEndMs } = counterOf(rule, clientIp);
      if (windowEndMs !== undefined) {
        if (!this.options.redis) return this.windowCounts.add(key, points, windowEndMs);
        // No insurance limiter here: its memory store has the same timer limit. While Redis does not
        // answer, this process counts the window in its own memory.
        pending = true;
        return consumed(this.limiterFor(rule.limit, rule.seconds, false), key, points, seconds).then((count) =>
          count ? withinWindow(count, windowLeftMs) : this.windowCounts.add(key, points, windowEndMs),
        );
      }
      const limiter = this.limiterFor(rule.limit, rule.seconds, true);
      const now = consumeNow(limiter, key, points, seconds ?? rule.seconds);
      if (now) return withinWindow(now, windowLeftMs);
      pending = true;
      return consumed(limiter, key, points, seconds).then((count) => withinWindow(count, windowLeftMs));
    });
    if (!pending) {
      for (const r of results) counts.push(r as Count | null);
      return decide(rules, methods, counts);
    }
    return Promise.all(results).then((all) => decide(rules, methods, all));
  }
}

/**
 * A fixed-window counter of `limit` points per `seconds`: in Redis when given (every process sharing it
 * counts together), in this process's memory otherwise. The proxy's limits and the API's per-key limits
 * are both counted with it.
 */
export function countingLimiter(options: {
  limit: number;
  seconds: number;
  keyPrefix: string;
  redis?: Redis;
  /** With Redis: whether this process's memory counts while Redis does not answer (default yes). */
  insured?: boolean;
}): RateLimiterAbstract {
  const { limit, seconds, keyPrefix, redis, insured = true } = options;
  const memory = new RateLimiterMemory({ points: limit, duration: seconds, keyPrefix });
  if (!redis) return memory;
  return new RateLimiterRedis({
    storeClient: redis,
    points: limit,
    duration: seconds,
    keyPrefix,
    // While Redis does not answer, each process limits on its own rather than refusing everything.
    insuranceLimiter: insured ? memory : undefined,
  });
}

export interface Count {
  consumed: number;
  msBeforeNext: number;
}

/** Which calls each rule lets through: those counted before the request, then its calls in order up to the limit. */
function decide(rules: Rule[], methods: string[], counts: (Count | null)[]): undefined | RateDecision {
  let refused: (Refusal | undefined)[] | null = null;
  for (let r = 0; r < rules.length; r++) {
    const result = counts[r];
    if (!result) continue;
    const rule = rules[r];
    const points = rule.methods ? countMatching(rule.methods, methods) : methods.length;
    const before = result.consumed - points;
    let allowed = Math.max(0, Math.min(points, rule.limit - before));
    if (allowed === points) continue;
    refused ??= new Array(methods.length).fill(undefined);
    const refusal = limitRefusal(rule, result.msBeforeNext);
    for (let i = 0; i < methods.length; i++) {
      if (rule.methods && !rule.methods.has(methods[i])) continue;
      if (allowed > 0) {
        allowed--;
        continue;
      }
      refused[i] ??= refusal;
    }
  }
  if (!refused) return undefined;
  if (refused.every((r) => r !== undefined)) return { refuse: refused[0] as Refusal };
  return { perCall: refused };
}

/**
 * The in-memory limiter's count, synchronously. RateLimiterMemory.consume is this same increment on its
 * MemoryStorage wrapped in a promise (no blocking or even execution is configured here); calling the
 * storage directly keeps the proxy's hot path free of a promise per request. Returns undefined for other
 * stores (Redis), which answer asynchronously through `consume`.
 */
function consumeNow(limiter: RateLimiterAbstract, key: string, points: number, seconds: number): Count | undefined {
  if (!(limiter instanceof RateLimiterMemory)) return undefined;
  const storage = (limiter as unknown as { _memoryStorage?: MemoryStorageLike })._memoryStorage;
  if (!storage || typeof storage.incrby !== "function") return undefined;
  const res = storage.incrby(limiter.getKey(key), points, seconds);
  return { consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext };
}

interface MemoryStorageLike {
  incrby(key: string, points: number, seconds: number): { consumedPoints: number; msBeforeNext: number };
}

function countMatching(set: Set<string>, methods: string[]): number {
  let n = 0;
  for (const m of methods) if (set.has(m)) n++;
  return n;
}

/**
 * The count after consuming, whether or not it went over the limit; null when the store failed. A new
 * count lasts `seconds` when given (a window's rest), else the limiter's duration.
 */
export async function consumed(
  limiter: RateLimiterAbstract,
  key: string,
  points: number,
  seconds?: number,
): Promise<Count | null> {
  try {
    const res = await limiter.consume(key, points, seconds === undefined ? undefined : { customDuration: seconds });
    return { consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext };
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes)
      return { consumed: rejection.consumedPoints, msBeforeNext: rejection.msBeforeNext };
    // The store failed and no insurance limiter took over: let the calls through rather than fail them.
    return null;
  }
}

/**
 * A call refused by a rule: the message names the limit (never an id), and the answer says when to retry,
 * from rate-limiter-flexible's msBeforeNext: `retryAfter` in whole seconds (as Retry-After says it on an
 * HTTP answer) and `retryAfterMs` in the error's data, which a WebSocket message's answer carries too.
 */
function limitRefusal(rule: Rule, msBeforeNext: number): Refusal {
  const retryAfterMs = Math.max(0, msBeforeNext);
  const retryAfter = retryAfterSeconds(retryAfterMs);
  return {
    kind: "RATE_LIMITED",
    http: 429,
    code: RATE_LIMITED_CODE,
    message: `Rate limited: ${rule.describe}. Retry in ${retryAfter} s.`,
    data: { ...rule.data, retryAfter, retryAfterMs },
    retryAfterMs,
  };
}
