import type { Db, Executor } from "../../platform/db/index.ts";
import { badInput, foundOr } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { pageSize } from "../../platform/paging.ts";
import { billingPeriod } from "../account/billing-period.ts";
import { cataloguePlan } from "../account/plan-catalogue.ts";
import { findAddon } from "../addons/catalogue.ts";
import { endpointByKey, endpointsByIds, setLimitReached, tagsOfEndpoints } from "../endpoints/service.ts";
import * as store from "./store.ts";

const MONTH_LIMIT = 24;

async function subscriptionOrFail(db: Db, accountId: string) {
  const sub = foundOr(await store.subscriptionOf(db, accountId), "The subscription");
  return sub;
}

/** The account's credits in its current period against the plan's responses per month. */
export async function currentUsage(db: Db, accountId: string, now = new Date()) {
  const sub = await subscriptionOrFail(db, accountId);
  const period = billingPeriod(sub, now);
  const totals = await store.totals(db, accountId, period.start, period.end);
  return { ...period, total: totals.credits, limit: sub.responsesPerMonth, lastUpdatedAt: totals.lastMinute };
}

/** Credits the account used in [start, end): what a period's bill counts (decision 0600). */
export async function periodCredits(db: Executor, accountId: string, start: Date, end: Date) {
  return (await store.totals(db, accountId, start, end)).credits;
}

/** periodCredits as one SQL value of a statement that reads the bill's other rows beside it. */
export const periodCreditsSql = store.creditsInWindowSql;

/** Credits each account used in its period [start, end), in one statement: what a batch of bills counts. */
export const periodCreditsOfMany = (db: Executor, periods: readonly { accountId: string; start: Date; end: Date }[]) =>
  store.creditsOfWindows(db, periods);

/** Credits the account used in [start, end) per UTC day (each day by its start), days without any left out. */
export async function creditsByDay(db: Executor, accountId: string, start: Date, end: Date) {
  const perDay = new Map<number, number>();
  for (const tick of await store.ticks(db, accountId, start, end, "day"))
    perDay.set(tick.at.getTime(), (perDay.get(tick.at.getTime()) ?? 0) + tick.credits);
  return [...perDay].map(([day, credits]) => ({ day: new Date(day), credits }));
}

/**
 * Applies the monthly limit to the account's endpoints (the transition itself is the endpoints service's).
 * A plan that bills overage (plans.json `overageCentsPerMillionCredits`) has no limit to reach: its
 * `limit` is then infinite, so the meter does not ask again. Returns whether the limit is reached.
 */
export async function enforceMonthlyLimit(db: Db, events: DomainEvents, accountId: string, now = new Date()) {
  const sub = await subscriptionOrFail(db, accountId);
  const period = billingPeriod(sub, now);
  const totals = await store.totals(db, accountId, period.start, period.end);
  const usage = { ...period, total: totals.credits, lastUpdatedAt: totals.lastMinute };
  const billsOverage = cataloguePlan(sub.planId)?.overageCentsPerMillionCredits != null;
  const limit = billsOverage ? Number.POSITIVE_INFINITY : sub.responsesPerMonth;
  const reached = usage.total >= limit;
  await setLimitReached(db, events, accountId, reached);
  return { ...usage, limit, reached };
}

type MethodAggregate = {
  method: string;
  requests: number;
  credits: number;
  archive: number;
  refused: number;
  malformed: number;
  unknownMethod: number;
};

function methodUsage(m: MethodAggregate, multiplierOf: (method: string) => number, archiveMultiplier: number) {
  return {
    methodName: m.method,
    requests: m.requests,
    score: m.requests > 0 ? m.credits / m.requests : 0,
    archive: m.archive,
    archiveMultiplier,
    multiplier: multiplierOf(m.method),
    // Everything the proxy answered itself, malformed calls included (see counting-rule.ts).
    refused: m.refused + m.malformed,
    malformed: m.malformed,
    unknownMethod: m.unknownMethod,
    total: m.credits,
  };
}

function sumByMethod(rows: MethodAggregate[]): MethodAggregate[] {
  const by = new Map<string, MethodAggregate>();
  for (const r of rows) {
    const e = by.get(r.method) ?? {
      method: r.method,
      requests: 0,
      credits: 0,
      archive: 0,
      refused: 0,
      malformed: 0,
      unknownMethod: 0,
    };
    e.requests += r.requests;
    e.credits += r.credits;
    e.archive += r.archive;
    e.refused += r.refused;
    e.malformed += r.malformed;
    e.unknownMethod += r.unknownMethod;
    by.set(r.method, e);
  }
  return [...by.values()].sort(
    (a, b) => b.credits - a.credits || b.requests - a.requests || a.method.localeCompare(b.method),
  );
}

const TICK_SERIES = 10;

export interface UsageArgs {
  periodIndex?: number | null;
  tickType?: "HOUR" | "DAY" | null;
  pastDay?: boolean | null;
  /** One endpoint of the account (its id or key); all of them when absent. */
  endpointId?: string | null;
}

export async function getUsage(
  db: Db,
  accountId: string,
  args: UsageArgs,
  pricing: { multiplierOf: (method: string) => number; archiveMultiplier: number },
  now = new Date(),
) {
  const periodIndex = args.periodIndex ?? 0;
  if (!Number.isInteger(periodIndex) || periodIndex < 0 || periodIndex > MONTH_LIMIT) {
    throw badInput([{ pointer: "/periodIndex", message: `Choose a period from 0 to ${MONTH_LIMIT}.` }]);
  }
  const sub = await subscriptionOrFail(db, accountId);
  const endpointId = args.endpointId ? (await endpointByKey(db, accountId, args.endpointId)).id : undefined;
  const period = billingPeriod(sub, now, args.pastDay ? 0 : periodIndex);
  // The past day in whole minutes, up to the end of the current one (usage rows are minutes).
  const endOfMinute = new Date((Math.floor(now.getTime() / 60_000) + 1) * 60_000);
  const window = args.pastDay ? { start: new Date(endOfMinute.getTime() - 86_400_000), end: endOfMinute } : period;
  const tick: "hour" | "day" =
    args.tickType === "DAY" ? "day" : args.tickType === "HOUR" || args.pastDay ? "hour" : "day";
  const [rows, tickRows, totals] = await Promise.all([
    store.byEndpointAndMethod(db, accountId, window.start, window.end, endpointId),
    store.ticks(db, accountId, window.start, window.end, tick, endpointId),
    store.totals(db, accountId, window.start, window.end, endpointId),
  ]);
  const endpointIds = [...new Set(rows.map((r) => r.endpointId))];
  const endpointRows = await endpointsByIds(db, accountId, endpointIds);
  const tagLinks = await tagsOfEndpoints(db, accountId, endpointIds);
  const endpointUsages = endpointRows
    .map((e) => {
      const own = rows.filter((r) => r.endpointId === e.id);
      return {
        endpointId: e.id,
        subdomain: e.name,
        isDedicated: e.isDedicated,
        accountId,
        label: e.label,
        chain: e.chain,
        network: e.network,
        status: e.status,
        totalUsage: own.reduce((s, r) => s + r.credits, 0),
        requests: own.reduce((s, r) => s + r.requests, 0),
        startTime: window.start,
        endTime: window.end,
        tags: tagLinks.filter((t) => t.endpointId === e.id).map((t) => ({ tagId: t.tagId, label: t.label })),
        methodUsages: sumByMethod(own).map((m) => methodUsage(m, pricing.multiplierOf, pricing.archiveMultiplier)),
      };
    })
    .sort((a, b) => b.totalUsage - a.totalUsage);
  const methods = sumByMethod(rows);
  const named = new Set(methods.slice(0, TICK_SERIES).map((m) => m.method));
  const byTick = new Map<number, Map<string, number>>();
  for (const r of tickRows) {
    const at = r.at.getTime();
    const values = byTick.get(at) ?? new Map<string, number>();
    const name = named.has(r.method) ? r.method : "other";
    values.set(name, (values.get(name) ?? 0) + r.credits);
    byTick.set(at, values);
  }
  const usageTicks = [...byTick.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([at, values]) => ({ x: new Date(at), y: [...values.entries()].map(([name, value]) => ({ name, value })) }));
  const billingPeriods = Array.from({ length: 12 }, (_, i) => {
    const p = billingPeriod(sub, now, i);
    return { startTime: p.start, endTime: p.end };
  }).filter((p, i) => i === 0 || p.endTime > sub.startDate);
  return {
    startTime: window.start,
    endTime: window.end,
    totalUsage: totals.credits,
    totalRequests: totals.requests,
    limit: sub.responsesPerMonth,
    lastUpdatedAt: totals.lastMinute,
    endpointUsages,
    methodUsages: methods.map((m) => methodUsage(m, pricing.multiplierOf, pricing.archiveMultiplier)),
    usageTicks,
    usagePoints: usageTicks.flatMap((tick) => tick.y.map((value) => ({ x: tick.x, ...value }))),
    billingPeriods,
    /** The points' width and the billing period the window is in (the current one for the past day), for usage read elsewhere. */
    tick,
    period,
  };
}

export async function topEndpoints(
  db: Db,
  accountId: string,
  args: { limit?: number | null; periodIndex?: number | null },
  now = new Date(),
) {
  const limit = pageSize(args.limit, { argument: "limit", fallback: 5 });
  const sub = await subscriptionOrFail(db, accountId);
  const period = billingPeriod(sub, now, args.periodIndex ?? 0);
  const rows = await store.topEndpoints(db, accountId, period.start, period.end, limit);
  return rows.map(({ endpoint, totalUsage }) => ({
    endpointId: endpoint.id,
    endpointChain: endpoint.chain,
    endpointSubdomain: endpoint.name,
    endpointNetwork: endpoint.network,
    endpointLabel: endpoint.label,
    endpointStatus: endpoint.status,
    totalUsage,
  }));
}

/**
 * Calls of each install's add-on methods served on its endpoint since `since` (the install's period), in
 * one query for all of them.
 */
export async function addonRequestsSince(
  db: Executor,
  accountId: string,
  installs: readonly { addonSlug: string; endpointId: string; since: Date }[],
): Promise<number[]> {
  // Usage is kept per minute: the minute a period started in counts whole.
  const rows = await store.requestsByMethodSince(
    db,
    accountId,
    installs.map((i) => ({
      endpointId: i.endpointId,
      since: new Date(Math.floor(i.since.getTime() / 60_000) * 60_000),
    })),
  );
  return installs.map((install, index) => {
    const addon = findAddon(install.addonSlug);
    if (!addon) return 0;
    const methods = new Set([...addon.gatedMethods, ...addon.rpcMethods.map((m) => m.name)]);
    const owned = (method: string) =>
      methods.has(method) || addon.gatedNamespaces.some((namespace) => method.startsWith(`${namespace}_`));
    return rows.filter((row) => row.range === index && owned(row.method)).reduce((sum, row) => sum + row.requests, 0);
  });
}
