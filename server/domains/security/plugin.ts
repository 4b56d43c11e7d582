import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type SecurityApiDeps, securityResolvers } from "./resolvers.ts";

/** An endpoint's security: tokens, JWTs, referrer, IP and domain lists, request filters, RPC methods. */
export const securityPlugin: DomainPlugin<SecurityApiDeps> = async (_app, { deps, api }) => {
  api.add(securityResolvers(deps));
};
