import { type Context, requirePrincipal } from "../../graphql/context.ts";
import type { Resolvers } from "../../graphql/resolvers.ts";
import { validateInput } from "../../platform/validation.ts";
import { CreditTable } from "./credits.ts";
import * as service from "./service.ts";

const credits = new CreditTable();
const pricing = {
  multiplierOf: (method: string) => credits.multiplierOf(method),
  archiveMultiplier: credits.catalogue.archiveMultiplier,
};

const present = (args: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));

export const usageResolvers: Resolvers = {
  Query: {
    usage: async (_: unknown, args: service.UsageArgs, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      validateInput("usage#/$defs/query", present(args as Record<string, unknown>));
      return service.getUsage(ctx.db, accountId, args, pricing);
    },
    topEndpoints: async (_: unknown, args: { limit?: number | null; periodIndex?: number | null }, ctx: Context) => {
      const { accountId } = requirePrincipal(ctx);
      return service.topEndpoints(ctx.db, accountId, args);
    },
  },
};
