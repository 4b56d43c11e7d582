import { featureFlags, getAccountOrFail } from "../domains/account/service.ts";
import { field } from "../graphql/field.ts";
import type { Resolvers } from "../graphql/resolvers.ts";
import { registryFor } from "./registry.ts";
import type { RegistryHolder } from "./watch.ts";

/** The registry as last loaded (reloaded on change in development). */
export interface RegistryApiDeps {
  registry: RegistryHolder;
}

export const registryResolvers = (deps: RegistryApiDeps): Resolvers => ({
  Query: {
    registry: field("VIEWER", async ({ ctx, principal, accountId }) => {
      const account = await getAccountOrFail(ctx.db, accountId);
      return registryFor(deps.registry.current(), principal.role, featureFlags(ctx.config, account));
    }),
  },
});
