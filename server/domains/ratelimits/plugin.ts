import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type RateLimitApiDeps, rateLimitResolvers } from "./resolvers.ts";

/** An endpoint's rate limiters and overrides. */
export const rateLimitsPlugin: DomainPlugin<RateLimitApiDeps> = async (_app, { deps, api }) => {
  api.add(rateLimitResolvers(deps));
};
