import type { Limit, LimitScope, LimitSource } from "../../dataplane/ratelimit/stage.ts";
import type { Executor } from "../../platform/db/index.ts";
import { billingPeriod } from "../account/billing-period.ts";
import { type AddonLimitRow, addonLimitRows } from "../addons/service.ts";
import {
  ALL_METHODS,
  type Bucket,
  bucketLabel,
  bucketLimit,
  bucketSeconds,
  buckets,
  effectiveRate,
  type Interval,
  intervalSeconds,
} from "./rules.ts";
import * as store from "./store.ts";

/** One enabled or disabled rate of a rate limiter, with its limiter's settings (one row per rate). */
export interface LimiterRow {
  id: string;
  accountId: string;
  endpointId: string;
  interval: string;
  methods: string[];
  limitByIp: boolean;
  rate: number;
  status: string;
}

export interface OverrideRow {
  accountId: string;
  endpointId: string;
  kind: string;
  bucket: string;
  rateLimit: number | null;
}

/** The rows the limits are made from: every account or one endpoint (scope null: every endpoint). */
export interface LimitRows {
  allAccountRps(): Promise<{ accountId: string; rps: number }[]>;
  planRps(accountId: string): Promise<number | null>;
  limiters(scope: LimitScope | null): Promise<LimiterRow[]>;
  overrides(scope: LimitScope | null): Promise<OverrideRow[]>;
  /** The plans of add-ons installed on endpoints (none when absent). */
  addonLimits?(scope: LimitScope | null): Promise<AddonLimitRow[]>;
}

/** The proxy's limit source on this service's database. */
export function databaseLimitSource(db: Executor): LimitSource {
  return limitSourceOf({
    allAccountRps: () => store.allAccountRps(db),
    planRps: (accountId) => store.planRps(db, accountId),
    limiters: (scope) => store.enforcedLimiters(db, scope),
    overrides: (scope) => store.enforcedOverrides(db, scope),
    addonLimits: (scope) => addonLimitRows(db, scope),
  });
}

/** The limits the rate-limit rules make of the rows: the plan's RPS per account, the buckets and limiters per endpoint. */
export function limitSourceOf(rows: LimitRows): LimitSource {
  return {
    async all() {
      const [rps, limiterRows, overrideRows, addonRows] = await Promise.all([
        rows.allAccountRps(),
        rows.limiters(null),
        rows.overrides(null),
        rows.addonLimits?.(null) ?? [],
      ]);
      const accounts = new Map<string, Limit | null>();
      for (const r of rps) accounts.set(r.accountId, accountLimit(r.accountId, r.rps));
      const byEndpoint = new Map<
        string,
        { accountId: string; limiters: LimiterRow[]; overrides: OverrideRow[]; addons: AddonLimitRow[] }
      >();
      const entry = (accountId: string, endpointId: string) => {
        let e = byEndpoint.get(endpointId);
        if (!e) {
          e = { accountId, limiters: [], overrides: [], addons: [] };
          byEndpoint.set(endpointId, e);
        }
        return e;
      };
      for (const l of limiterRows) entry(l.accountId, l.endpointId).limiters.push(l);
      for (const o of overrideRows) entry(o.accountId, o.endpointId).overrides.push(o);
      for (const a of addonRows) entry(a.accountId, a.endpointId).addons.push(a);
      const endpoints = new Map<string, Limit[]>();
      const rpsOf = new Map(rps.map((r) => [r.accountId, r.rps]));
      for (const [endpointId, e] of byEndpoint) {
        endpoints.set(endpointId, [
          ...endpointLimits(endpointId, rpsOf.get(e.accountId) ?? null, e.limiters, e.overrides),
          ...e.addons.flatMap(addonLimits),
        ]);
      }
      return { accounts, endpoints };
    },
    account: async (accountId) => accountLimit(accountId, await rows.planRps(accountId)),
    async endpoint(scope) {
      const [planRps, limiterRows, overrideRows, addonRows] = await Promise.all([
        rows.planRps(scope.accountId),
        rows.limiters(scope),
        rows.overrides(scope),
        rows.addonLimits?.(scope) ?? [],
      ]);
      return {
        account: accountLimit(scope.accountId, planRps),
        endpoint: [
          ...endpointLimits(scope.endpointId, planRps, limiterRows, overrideRows),
          ...addonRows.flatMap(addonLimits),
        ],
      };
    },
  };
}

/** A billing period is at most 31 days: the longest a period's count is kept. */
const LONGEST_PERIOD_SECONDS = 31 * 86_400;

/** An installed add-on's plan: its requests per second and per billing period, over the add-on's methods on the endpoint. */
function addonLimits(row: AddonLimitRow): Limit[] {
  const data = (limit: string, rate: number, interval: string) => ({ limit, rate, interval, addon: row.addonName });
  return [
    {
      methods: row.methods,
      perIp: false,
      limit: row.rpsLimit,
      seconds: 1,
      key: `ad:${row.installId}:rps`,
      describe: `the ${row.addonName} add-on's plan allows ${row.rpsLimit} requests per second`,
      data: data("ADDON_RPS", row.rpsLimit, "SECOND"),
    },
    {
      methods: row.methods,
      perIp: false,
      limit: row.monthlyRequestsLimit,
      seconds: LONGEST_PERIOD_SECONDS,
      // Counted in the account's billing period (the one rule of account/billing-period.ts), which rolls
      // on at its end even before billing moves the subscription row on.
      window: (nowMs) => {
        const { start, end } = billingPeriod(row.period, new Date(nowMs));
        return { startMs: start.getTime(), endMs: end.getTime() };
      },
      key: `ad:${row.installId}:month`,
      describe: `the ${row.addonName} add-on's plan allows ${row.monthlyRequestsLimit} requests a billing period`,
      data: data("ADDON_MONTHLY_REQUESTS", row.monthlyRequestsLimit, "MONTH"),
    },
  ];
}

/** The plan's requests per second, across the account's endpoints. */
function accountLimit(accountId: string, rps: number | null): Limit | null {
  if (rps === null || rps <= 0) return null;
  return {
    methods: null,
    perIp: false,
    limit: rps,
    seconds: 1,
    key: `a:${accountId}`,
    describe: `the plan's limit of ${rps} requests per second for the account`,
    data: { limit: "PLAN_RPS", rate: rps, interval: "SECOND" },
  };
}

/** An endpoint's bucket overrides and rate limiters as limits. */
export function endpointLimits(
  endpointId: string,
  planRps: number | null,
  limiterRows: LimiterRow[],
  overrideRows: { kind: string; bucket: string; rateLimit: number | null }[],
): Limit[] {
  const limits: Limit[] = [];
  for (const bucket of buckets as readonly Bucket[]) {
    const { limit, perIp } = bucketLimit(bucket, planRps, overrideRows);
    if (limit === null) continue;
    limits.push({
      methods: null,
      perIp,
      limit,
      seconds: bucketSeconds[bucket],
      key: `e:${endpointId}:${bucket}`,
      describe: `this endpoint's ${bucket} limit of ${limit} requests ${bucketLabel[bucket]}${perIp ? " per client IP" : ""}`,
      data: {
        limit: bucket,
        rate: limit,
        interval: bucket === "RPS" ? "SECOND" : bucket === "RPM" ? "MINUTE" : "DAY",
        perIp,
      },
    });
  }
  const byLimiter = new Map<string, LimiterRow[]>();
  for (const row of limiterRows) {
    const list = byLimiter.get(row.id) ?? [];
    list.push(row);
    byLimiter.set(row.id, list);
  }
  for (const [id, rows] of byLimiter) {
    const rate = effectiveRate(rows);
    if (rate === null) continue;
    const { interval, methods, limitByIp } = rows[0];
    const all = methods.includes(ALL_METHODS);
    limits.push({
      methods: all ? null : methods,
      perIp: limitByIp,
      limit: rate,
      seconds: intervalSeconds[interval as Interval],
      key: `l:${id}`,
      // Said to whoever calls the endpoint: the limit, not the limiter's id.
      describe: `a rate limiter allows ${rate} calls per ${interval.toLowerCase()}${all ? "" : ` to ${methods.join(", ")}`}${limitByIp ? " per client IP" : ""}`,
      data: { limit: "RATE_LIMITER", rate, interval, methods, perIp: limitByIp },
    });
  }
  return limits;
}
