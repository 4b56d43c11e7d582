import type { EntityInputRef } from "../../../schemas/generated/entities.ts";
import { field, fieldWithInput, present } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import type { DomainEvents } from "../../platform/events.ts";
import type { AuditEntryRow } from "../audit/service.ts";
import { effectiveRate, limiterKey } from "./rules.ts";
import * as service from "./service.ts";

const auditView = (a: AuditEntryRow) => ({
  date: a.createdAt,
  // Every rate-limit change is recorded with its reason, empty when none was given.
  reason: a.reason ?? "",
  user: a.userEmail,
  userRole: a.userRole,
  action: a.action,
  subject: a.subject,
  changes: a.changes,
});

function limiterView(v: service.LimiterView) {
  const { limiter } = v;
  return {
    id: limiter.id,
    interval: limiter.interval,
    key: limiterKey(limiter.limitByIp),
    methods: limiter.methods,
    limitByIP: limiter.limitByIp,
    effectiveRate: effectiveRate(v.rates),
    rates: v.rates.map((r) => ({
      id: r.id,
      rate: r.rate,
      source: r.source,
      status: r.status,
      endpoint: limiter.endpointId,
      audit: v.audits.filter((a) => a.subjectId === r.id).map(auditView),
    })),
    audit: v.audits.map(auditView),
    createdAt: limiter.createdAt,
  };
}

function limitsView(limits: Awaited<ReturnType<typeof service.getRateLimits>>) {
  return { ...limits, audit: limits.audit.map(auditView) };
}

/** What the RateLimiter and RateLimits types resolve from (the generated types' mappers). */
export type RateLimiterView = ReturnType<typeof limiterView>;
export type RateLimitsView = ReturnType<typeof limitsView>;

/** The mutations whose arguments are their input, nulls dropped as the JSON Schema expects. */
const argsInput = <R extends EntityInputRef>(schema: R) => ({ schema, of: (args: object) => present(args) });

/** Changes to limits reach the proxy (in every process) as events. */
export interface RateLimitApiDeps {
  events: DomainEvents;
}

export const rateLimitResolvers = (deps: RateLimitApiDeps): Resolvers => ({
  Query: {
    rateLimiters: field("VIEWER", async ({ ctx, accountId, args }) => {
      const views = await service.listRateLimiters(ctx.db, accountId, args.endpointId, args.chain, args.network);
      return views.map(limiterView);
    }),
    rateLimits: field("VIEWER", async ({ ctx, accountId, args }) =>
      limitsView(await service.getRateLimits(ctx.db, accountId, args.endpointId)),
    ),
  },
  Mutation: {
    createRateLimiter: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/createInput"),
      async ({ ctx, principal, input }) =>
        limiterView(await service.createRateLimiter(ctx.db, deps.events, principal, input)),
    ),
    updateRateLimiter: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/updateInput"),
      async ({ ctx, principal, input }) =>
        limiterView(await service.updateRateLimiter(ctx.db, deps.events, principal, input)),
    ),
    updateRateLimiterRate: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/updateRateInput"),
      async ({ ctx, principal, input }) =>
        limiterView(await service.updateRateLimiterRate(ctx.db, deps.events, principal, input)),
    ),
    deleteRateLimiter: field("ADMIN", ({ ctx, principal, args }) =>
      service.deleteRateLimiter(ctx.db, deps.events, principal, args),
    ),
    createRateLimitOverride: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/overrideInput"),
      async ({ ctx, principal, input }) =>
        limitsView(await service.createOverride(ctx.db, deps.events, principal, "LIMIT", input)),
    ),
    createRateLimitKeyOverride: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/keyOverrideInput"),
      async ({ ctx, principal, input }) =>
        limitsView(await service.createOverride(ctx.db, deps.events, principal, "KEY", input)),
    ),
    deleteRateLimitOverride: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/deleteOverrideInput"),
      async ({ ctx, principal, input }) =>
        limitsView(await service.deleteOverride(ctx.db, deps.events, principal, "LIMIT", input)),
    ),
    deleteRateLimitKeyOverride: fieldWithInput(
      "ADMIN",
      argsInput("rate-limiter#/$defs/deleteOverrideInput"),
      async ({ ctx, principal, input }) =>
        limitsView(await service.deleteOverride(ctx.db, deps.events, principal, "KEY", input)),
    ),
  },
});
