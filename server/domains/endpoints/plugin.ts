import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type EndpointApiDeps, endpointResolvers } from "./resolvers.ts";

/** Endpoints: their lists, labels, tags, pausing and archiving. */
export const endpointsPlugin: DomainPlugin<EndpointApiDeps> = async (_app, { deps, api }) => {
  api.add(endpointResolvers(deps));
};
