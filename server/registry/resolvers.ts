import { featureFlags, getAccountOrFail } from "../domains/account/service.ts";
import { field } from "../graphql/field.ts";
import type { Resolvers } from "../graphql/resolvers.ts";
import { registryFor } from "./registry.ts";

export const registryResolvers: Resolvers = {
  Query: {
    registry: field("VIEWER", async ({ ctx, principal, accountId }) => {
      const account = await getAccountOrFail(ctx.db, accountId);
      return registryFor(ctx.services.registry.current(), principal.role, featureFlags(ctx.config, account));
    }),
  },
};
