import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type TokensApiDeps, tokensResolvers } from "./resolvers.ts";

/** Access tokens (API keys): creating, listing, revoking and limiting them. Checking a key is keys.ts's. */
export const tokensPlugin: DomainPlugin<TokensApiDeps> = async (_app, { deps, api }) => {
  api.add(tokensResolvers(deps));
};
