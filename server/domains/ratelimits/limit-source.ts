import type { Limit, LimitScope, LimitSource } from "../../dataplane/ratelimit/stage.ts";
import type { Executor } from "../../platform/db/index.ts";
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
}

/** The proxy's limit source on this service's database. */
export function databaseLimitSource(db: Executor): LimitSource {
  return limitSourceOf({
    allAccountRps: () => store.allAccountRps(db),
    planRps: (accountId) => store.planRps(db, accountId),
    limiters: (scope) => store.enforcedLimiters(db, scope),
    overrides: (scope) => store.enforcedOverrides(db, scope),
  });
}

/** The limits the rate-limit rules make of the rows: the plan's RPS per account, the buckets and limiters per endpoint. */
export function limitSourceOf(rows: LimitRows): LimitSource {
  return {
    async all() {
      const [rps, limiterRows, overrideRows] = await Promise.all([
        rows.allAccountRps(),
        rows.limiters(null),
        rows.overrides(null),
      ]);
      const accounts = new Map<string, Limit | null>();
      for (const r of rps) accounts.set(r.accountId, accountLimit(r.accountId, r.rps));
      const byEndpoint = new Map<string, { accountId: string; limiters: LimiterRow[]; overrides: OverrideRow[] }>();
      const entry = (accountId: string, endpointId: string) => {
        let e = byEndpoint.get(endpointId);
        if (!e) {
          e = { accountId, limiters: [], overrides: [] };
          byEndpoint.set(endpointId, e);
        }
        return e;
      };
      for (const l of limiterRows) entry(l.accountId, l.endpointId).limiters.push(l);
      for (const o of overrideRows) entry(o.accountId, o.endpointId).overrides.push(o);
      const endpoints = new Map<string, Limit[]>();
      const rpsOf = new Map(rps.map((r) => [r.accountId, r.rps]));
      for (const [endpointId, e] of byEndpoint) {
        endpoints.set(endpointId, endpointLimits(endpointId, rpsOf.get(e.accountId) ?? null, e.limiters, e.overrides));
      }
      return { accounts, endpoints };
    },
    account: async (accountId) => accountLimit(accountId, await rows.planRps(accountId)),
    async endpoint(scope) {
      const [planRps, limiterRows, overrideRows] = await Promise.all([
        rows.planRps(scope.accountId),
        rows.limiters(scope),
        rows.overrides(scope),
      ]);
      return {
        account: accountLimit(scope.accountId, planRps),
        endpoint: endpointLimits(scope.endpointId, planRps, limiterRows, overrideRows),
      };
    },
  };
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
