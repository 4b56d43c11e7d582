import DataLoader from "dataloader";
import { type Context, loaderOf } from "../../graphql/context.ts";
import { field, fieldWithInput, present } from "../../graphql/field.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { gbSecondUsage } from "../functions/billing.ts";
import { writeUsage } from "../kv/metering.ts";
import { usageByAddon } from "./addon-usage.ts";
import { CreditTable } from "./credits.ts";
import { endpointMetrics } from "./endpoint-metrics.ts";
import * as service from "./service.ts";

const credits = new CreditTable();

/** The add-on calls of the installs listed in one answer, counted in one query. */
const addonRequests = (ctx: Context) =>
  new DataLoader<{ accountId: string; addonSlug: string; endpointId: string; since: Date }, number, string>(
    async (installs) => service.addonRequestsSince(ctx.db, installs[0]?.accountId ?? "", installs),
    { cacheKeyFn: (i) => `${i.endpointId} ${i.addonSlug} ${i.since.toISOString()}` },
  );
const pricing = {
  multiplierOf: (method: string) => credits.multiplierOf(method),
  archiveMultiplier: credits.catalogue.archiveMultiplier,
};

/** What the Usage and TopEndpoint types resolve from (the generated types' mappers). */
export type UsageView = Awaited<ReturnType<typeof service.getUsage>>;
export type TopEndpointView = Awaited<ReturnType<typeof service.topEndpoints>>[number];

export const usageResolvers: Resolvers = {
  AccountAddon: {
    // The add-on's calls on its endpoint in the install's current period (an account add-on has none of its own).
    planMonthlyRequests: field("VIEWER", ({ ctx, accountId, parent }) => {
      const { addonSlug, endpointId, currentPeriodStart } = parent as typeof parent & { currentPeriodStart?: Date };
      return addonSlug && endpointId && currentPeriodStart
        ? loaderOf(ctx, addonRequests).load({ accountId, addonSlug, endpointId, since: currentPeriodStart })
        : 0;
    }),
  },
  EndpointMetrics: {
    addonUsages: field("VIEWER", ({ parent }) =>
      usageByAddon(
        (parent.methods ?? []).map((m) => ({
          method: m.method,
          requests: m.calls,
          credits: m.credits,
          refused: m.refused,
        })),
      ),
    ),
  },
  Query: {
    usage: fieldWithInput(
      "VIEWER",
      { schema: "usage#/$defs/query", of: (args) => present(args) },
      ({ ctx, accountId, args }) => service.getUsage(ctx.db, accountId, args, pricing),
    ),
    topEndpoints: field("VIEWER", ({ ctx, accountId, args }) => service.topEndpoints(ctx.db, accountId, args)),
    endpointMetrics: field("VIEWER", ({ ctx, accountId, args }) => endpointMetrics(ctx.db, accountId, args)),
  },
  Usage: {
    addonUsages: field("VIEWER", ({ parent }) =>
      usageByAddon(
        parent.methodUsages.map((m) => ({
          method: m.methodName,
          requests: m.requests,
          credits: m.total,
          refused: m.refused,
        })),
      ),
    ),
    kvWrites: field("VIEWER", ({ ctx, accountId, parent }) =>
      writeUsage(ctx.db, accountId, {
        window: { start: parent.startTime, end: parent.endTime },
        period: parent.period,
        tick: parent.tick,
      }),
    ),
    functionGbSeconds: field("VIEWER", ({ ctx, accountId, parent }) =>
      gbSecondUsage(ctx.db, accountId, {
        window: { start: parent.startTime, end: parent.endTime },
        period: parent.period,
        tick: parent.tick,
      }),
    ),
  },
};
