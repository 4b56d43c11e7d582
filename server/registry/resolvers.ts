import { featureFlags } from "../domains/account/service.ts";
import { getAccount } from "../domains/account/store.ts";
import { type Context, requirePrincipal } from "../graphql/context.ts";
import type { Resolvers } from "../graphql/resolvers.ts";
import { notFound } from "../platform/errors.ts";
import { registryFor } from "./registry.ts";

export const registryResolvers: Resolvers = {
  Query: {
    registry: async (_: unknown, __: unknown, ctx: Context) => {
      const principal = requirePrincipal(ctx);
      const account = await getAccount(ctx.db, principal.accountId);
      if (!account) throw notFound("The account");
      return registryFor(ctx.services.registry.current(), principal.role, featureFlags(ctx.config, account));
    },
  },
};
