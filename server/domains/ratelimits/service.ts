import type { Db, Executor } from "../../platform/db/index.ts";
import { foundOr, notFound } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { isUuid } from "../../platform/ids.ts";
import type { Role } from "../../platform/roles.ts";
import { type AuditEntryRow, endpointAudit, recordAudit } from "../audit/service.ts";
import { catalogueNetwork } from "../catalogue/networks.ts";
import { getEndpointOrFail } from "../endpoints/service.ts";
import { type Bucket, bucketDefault, buckets, type Interval, limiterKey, overrideKey } from "./rules.ts";
import * as store from "./store.ts";

/** Who changes a limit: recorded in the audit. */
export interface Actor {
  accountId: string;
  userId: string;
  role: Role;
}

/** The endpoint, when it is this account's and (if named) on this chain and network. */
export async function endpointOf(
  db: Db,
  accountId: string,
  endpointId: string,
  chain?: string | null,
  network?: string | null,
) {
  if (network) catalogueNetwork(network);
  const endpoint = await getEndpointOrFail(db, accountId, endpointId);
  if ((chain && chain !== endpoint.chain) || (network && network !== endpoint.network)) throw notFound("The endpoint");
  return endpoint;
}

async function audit(
  tx: Executor,
  actor: Actor,
  endpointId: string,
  entry: { subject: string; subjectId: string; action: string; reason: string; changes?: Record<string, unknown> },
) {
  await recordAudit(tx, actor, { area: "RATE_LIMITS", endpointId, ...entry });
}

export interface LimiterView {
  limiter: store.RateLimiterRow;
  rates: store.RateRow[];
  audits: AuditEntryRow[];
}

export async function listRateLimiters(
  db: Db,
  accountId: string,
  endpointId: string,
  chain?: string | null,
  network?: string | null,
) {
  const endpoint = await endpointOf(db, accountId, endpointId, chain, network);
  const limiters = await store.listLimiters(db, accountId, endpoint.id);
  return views(db, accountId, endpoint.id, limiters);
}

async function views(
  db: Executor,
  accountId: string,
  endpointId: string,
  limiters: store.RateLimiterRow[],
): Promise<LimiterView[]> {
  const [rates, audits] = await Promise.all([
    store.ratesOf(
      db,
      accountId,
      limiters.map((l) => l.id),
    ),
    limiters.length > 0 ? endpointAudit(db, accountId, "RATE_LIMITS", endpointId, 1000) : Promise.resolve([]),
  ]);
  return limiters.map((limiter) => {
    const own = rates.filter((r) => r.rateLimiterId === limiter.id);
    const ids = new Set([limiter.id, ...own.map((r) => r.id)]);
    return { limiter, rates: own, audits: audits.filter((a) => a.subjectId !== null && ids.has(a.subjectId)) };
  });
}

async function oneView(db: Executor, accountId: string, endpointId: string, limiterId: string) {
  const limiter = foundOr(await store.getLimiter(db, accountId, endpointId, limiterId), "The rate limiter");
  const [view] = await views(db, accountId, endpointId, [limiter]);
  return view;
}

/** Waits until the change is in force at this process's proxy and published to the others. */
const changed = (events: DomainEvents, accountId: string, endpointId: string) =>
  events.emitAndWait("ratelimits.changed", { accountId, endpointId });

export async function createRateLimiter(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  input: {
    endpointId: string;
    interval: Interval;
    rate: number;
    methods: string[];
    reason?: string;
    limitByIP: boolean;
  },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId);
  const view = await db.transaction(async (tx) => {
    const limiter = await store.insertLimiter(tx, actor.accountId, {
      endpointId: endpoint.id,
      interval: input.interval,
      methods: input.methods,
      limitByIp: input.limitByIP,
    });
    const rate = await store.insertRate(tx, actor.accountId, {
      rateLimiterId: limiter.id,
      rate: input.rate,
      source: "USER",
    });
    await audit(tx, actor, endpoint.id, {
      subject: "RATE_LIMITER",
      subjectId: limiter.id,
      action: "CREATE",
      reason: input.reason ?? "",
      changes: {
        interval: input.interval,
        methods: input.methods,
        limitByIP: input.limitByIP,
        rate: input.rate,
        key: limiterKey(input.limitByIP),
        rateId: rate.id,
      },
    });
    return oneView(tx, actor.accountId, endpoint.id, limiter.id);
  });
  await changed(events, actor.accountId, endpoint.id);
  return view;
}

export async function updateRateLimiter(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  input: {
    endpointId: string;
    chain?: string | null;
    network?: string | null;
    rateLimiterId: string;
    methods?: string[] | null;
    interval?: Interval | null;
    reason?: string;
    limitByIP?: boolean | null;
  },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId, input.chain, input.network);
  if (!isUuid(input.rateLimiterId)) throw notFound("The rate limiter");
  const view = await db.transaction(async (tx) => {
    const before = foundOr(
      await store.getLimiter(tx, actor.accountId, endpoint.id, input.rateLimiterId),
      "The rate limiter",
    );
    const set = {
      ...(input.methods && { methods: input.methods }),
      ...(input.interval && { interval: input.interval }),
      ...(typeof input.limitByIP === "boolean" && { limitByIp: input.limitByIP }),
    };
    await store.updateLimiter(tx, actor.accountId, before.id, set);
    await audit(tx, actor, endpoint.id, {
      subject: "RATE_LIMITER",
      subjectId: before.id,
      action: "UPDATE",
      reason: input.reason ?? "",
      changes: {
        before: { interval: before.interval, methods: before.methods, limitByIP: before.limitByIp },
        after: set,
      },
    });
    return oneView(tx, actor.accountId, endpoint.id, before.id);
  });
  await changed(events, actor.accountId, endpoint.id);
  return view;
}

export async function updateRateLimiterRate(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  input: {
    endpointId: string;
    chain?: string | null;
    network?: string | null;
    rateLimiterRateId: string;
    rate?: number | null;
    reason?: string;
    enabled?: boolean | null;
  },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId, input.chain, input.network);
  if (!isUuid(input.rateLimiterRateId)) throw notFound("The rate");
  const view = await db.transaction(async (tx) => {
    const found = foundOr(await store.getRate(tx, actor.accountId, endpoint.id, input.rateLimiterRateId), "The rate");
    const set = {
      ...(typeof input.rate === "number" && { rate: input.rate }),
      ...(typeof input.enabled === "boolean" && { status: input.enabled ? "ENABLED" : "DISABLED" }),
    };
    await store.updateRate(tx, actor.accountId, found.rate.id, set);
    await audit(tx, actor, endpoint.id, {
      subject: "RATE",
      subjectId: found.rate.id,
      action: "UPDATE",
      reason: input.reason ?? "",
      changes: { before: { rate: found.rate.rate, status: found.rate.status }, after: set },
    });
    return oneView(tx, actor.accountId, endpoint.id, found.limiter.id);
  });
  await changed(events, actor.accountId, endpoint.id);
  return view;
}

export async function deleteRateLimiter(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  input: { endpointId: string; chain?: string | null; network?: string | null; rateLimiterId: string },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId, input.chain, input.network);
  if (!isUuid(input.rateLimiterId)) throw notFound("The rate limiter");
  await db.transaction(async (tx) => {
    const before = foundOr(
      await store.getLimiter(tx, actor.accountId, endpoint.id, input.rateLimiterId),
      "The rate limiter",
    );
    await store.deleteLimiter(tx, actor.accountId, before.id);
    await audit(tx, actor, endpoint.id, {
      subject: "RATE_LIMITER",
      subjectId: before.id,
      action: "DELETE",
      reason: "Deleted",
      changes: { interval: before.interval, methods: before.methods, limitByIP: before.limitByIp },
    });
  });
  await changed(events, actor.accountId, endpoint.id);
  return { success: true, message: "The rate limiter was deleted." };
}

export interface RateLimitEntryView {
  bucket: Bucket;
  key: string;
  rateLimit: { id: string; rateLimit: number | null; audit: { reason: string | null } | null };
}

/** The endpoint's buckets: defaults (the plan's RPS on the account; no RPM or RPD limit), then its overrides. */
export async function getRateLimits(db: Db, accountId: string, endpointId: string) {
  const endpoint = await endpointOf(db, accountId, endpointId);
  const [rps, overrides, audits] = await Promise.all([
    store.planRps(db, accountId),
    store.listOverrides(db, accountId, endpoint.id),
    endpointAudit(db, accountId, "RATE_LIMITS", endpoint.id, 200),
  ]);
  const defaults: RateLimitEntryView[] = buckets.map((bucket) => {
    const { key, limit } = bucketDefault(bucket, rps);
    return {
      bucket,
      key,
      rateLimit: {
        id: `default:${bucket}`,
        rateLimit: limit,
        audit: {
          reason: key === "account" ? "The plan's requests per second, shared by the account's endpoints." : null,
        },
      },
    };
  });
  const entry = (o: store.OverrideRow): RateLimitEntryView => ({
    bucket: o.bucket as Bucket,
    key: overrideKey(o.kind),
    rateLimit: { id: o.id, rateLimit: o.rateLimit, audit: { reason: o.reason } },
  });
  return {
    endpointId: endpoint.id,
    defaults,
    limitOverrides: overrides.filter((o) => o.kind === "LIMIT").map(entry),
    keyOverrides: overrides.filter((o) => o.kind === "KEY").map(entry),
    audit: audits,
  };
}

export async function createOverride(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  kind: "LIMIT" | "KEY",
  input: { endpointId: string; bucket: Bucket; rateLimit?: number; reason?: string },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId);
  await db.transaction(async (tx) => {
    const saved = await store.upsertOverride(tx, actor.accountId, {
      endpointId: endpoint.id,
      kind,
      bucket: input.bucket,
      rateLimit: kind === "LIMIT" ? (input.rateLimit ?? null) : null,
      reason: input.reason ?? "",
    });
    await audit(tx, actor, endpoint.id, {
      subject: kind === "LIMIT" ? "LIMIT_OVERRIDE" : "KEY_OVERRIDE",
      subjectId: saved.id,
      action: "CREATE",
      reason: input.reason ?? "",
      changes: { bucket: input.bucket, ...(kind === "LIMIT" && { rateLimit: input.rateLimit }) },
    });
  });
  await changed(events, actor.accountId, endpoint.id);
  return getRateLimits(db, actor.accountId, endpoint.id);
}

export async function deleteOverride(
  db: Db,
  events: DomainEvents,
  actor: Actor,
  kind: "LIMIT" | "KEY",
  input: { endpointId: string; overrideId: string; reason?: string },
) {
  const endpoint = await endpointOf(db, actor.accountId, input.endpointId);
  if (!isUuid(input.overrideId)) throw notFound("The override");
  await db.transaction(async (tx) => {
    const deleted = foundOr(
      await store.deleteOverride(tx, actor.accountId, endpoint.id, kind, input.overrideId),
      "The override",
    );
    await audit(tx, actor, endpoint.id, {
      subject: kind === "LIMIT" ? "LIMIT_OVERRIDE" : "KEY_OVERRIDE",
      subjectId: deleted.id,
      action: "DELETE",
      reason: input.reason ?? "",
      changes: { bucket: deleted.bucket, rateLimit: deleted.rateLimit },
    });
  });
  await changed(events, actor.accountId, endpoint.id);
  return getRateLimits(db, actor.accountId, endpoint.id);
}
