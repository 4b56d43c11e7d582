import { type Context, requirePrincipal, requireRole } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import { type Bucket, effectiveRate, type Interval, limiterKey } from "./rules.ts";
import * as service from "./service.ts";
import type { AuditRow } from "./store.ts";

const auditView = (a: AuditRow) => ({
  date: a.createdAt,
  reason: a.reason,
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

/** The GraphQL arguments minus nulls, so optional fields are absent (as the JSON Schema expects). */
const present = (args: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));

type Args = Record<string, unknown>;

export const rateLimitResolvers: Resolvers = {
  Query: {
    rateLimiters: async (
      _: unknown,
      args: { endpointId: string; chain?: string | null; network?: string | null },
      ctx: Context,
    ) => {
      const { accountId } = requirePrincipal(ctx);
      const views = await service.listRateLimiters(ctx.db, accountId, args.endpointId, args.chain, args.network);
      return views.map(limiterView);
    },
    rateLimits: async (_: unknown, args: { endpointId: string }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return limitsView(await service.getRateLimits(ctx.db, accountId, args.endpointId));
    },
  },
  Mutation: {
    createRateLimiter: async (_: unknown, args: Args, ctx: Context) => {
      const actor = requireRole(ctx, "ADMIN");
      const input = validateInput<{
        endpointId: string;
        interval: Interval;
        rate: number;
        methods: string[];
        reason: string;
        limitByIP: boolean;
      }>("rate-limiter#/$defs/createInput", present(args));
      return limiterView(await service.createRateLimiter(ctx.db, ctx.services.events, actor, input));
    },
    updateRateLimiter: async (_: unknown, args: Args, ctx: Context) => {
      const actor = requireRole(ctx, "ADMIN");
      const input = validateInput<Parameters<typeof service.updateRateLimiter>[3]>(
        "rate-limiter#/$defs/updateInput",
        present(args),
      );
      return limiterView(await service.updateRateLimiter(ctx.db, ctx.services.events, actor, input));
    },
    updateRateLimiterRate: async (_: unknown, args: Args, ctx: Context) => {
      const actor = requireRole(ctx, "ADMIN");
      const input = validateInput<Parameters<typeof service.updateRateLimiterRate>[3]>(
        "rate-limiter#/$defs/updateRateInput",
        present(args),
      );
      return limiterView(await service.updateRateLimiterRate(ctx.db, ctx.services.events, actor, input));
    },
    deleteRateLimiter: async (
      _: unknown,
      args: { endpointId: string; chain?: string | null; network?: string | null; rateLimiterId: string },
      ctx: Context,
    ) => {
      const actor = requireRole(ctx, "ADMIN");
      return service.deleteRateLimiter(ctx.db, ctx.services.events, actor, args);
    },
    createRateLimitOverride: async (_: unknown, args: Args, ctx: Context) => {
      const actor = requireRole(ctx, "ADMIN");
      const input = validateInput<{ endpointId: string; bucket: Bucket; rateLimit: number; reason: string }>(
        "rate-limiter#/$defs/overrideInput",
        present(args),
      );
      return limitsView(await service.createOverride(ctx.db, ctx.services.events, actor, "LIMIT", input));
    },
    createRateLimitKeyOverride: async (_: unknown, args: Args, ctx: Context) => {
      const actor = requireRole(ctx, "ADMIN");
      const input = validateInput<{ endpointId: string; bucket: Bucket; reason: string }>(
        "rate-limiter#/$defs/keyOverrideInput",
        present(args),
      );
      return limitsView(await service.createOverride(ctx.db, ctx.services.events, actor, "KEY", input));
    },
    deleteRateLimitOverride: async (
      _: unknown,
      args: { endpointId: string; overrideId: string; reason: string },
      ctx: Context,
    ) => {
      const actor = requireRole(ctx, "ADMIN");
      validateInput("rate-limiter#/$defs/deleteOverrideInput", args);
      return limitsView(await service.deleteOverride(ctx.db, ctx.services.events, actor, "LIMIT", args));
    },
    deleteRateLimitKeyOverride: async (
      _: unknown,
      args: { endpointId: string; overrideId: string; reason: string },
      ctx: Context,
    ) => {
      const actor = requireRole(ctx, "ADMIN");
      validateInput("rate-limiter#/$defs/deleteOverrideInput", args);
      return limitsView(await service.deleteOverride(ctx.db, ctx.services.events, actor, "KEY", args));
    },
  },
};
