import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type EndpointApiDeps, endpointResolvers, ListedViews } from "./resolvers.ts";

/** Endpoints: their lists, labels, tags, pausing and archiving. */
export const endpointsPlugin: DomainPlugin<Omit<EndpointApiDeps, "listedViews">> = async (_app, { deps, api }) => {
  api.add(endpointResolvers({ ...deps, listedViews: new ListedViews() }));
};
