import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type CatalogueApiDeps, catalogueResolvers } from "./resolvers.ts";

/** The chains and networks an endpoint can be made for, and which this installation serves. */
export const cataloguePlugin: DomainPlugin<CatalogueApiDeps> = async (_app, { deps, api }) => {
  api.add(catalogueResolvers(deps));
};
