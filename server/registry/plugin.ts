import type { DomainPlugin } from "../graphql/plugin.ts";
import { type RegistryApiDeps, registryResolvers } from "./resolvers.ts";

/** The screen registry the console is drawn from, as the viewer's role and plan may see it. */
export const registryPlugin: DomainPlugin<RegistryApiDeps> = async (_app, { deps, api }) => {
  api.add(registryResolvers(deps));
};
