import type { Resolvers } from "../graphql/resolvers.ts";
import { registryResolvers } from "../registry/resolvers.ts";
import { accountResolvers } from "./account/resolvers.ts";
import { catalogueResolvers } from "./catalogue/resolvers.ts";
import { endpointResolvers } from "./endpoints/resolvers.ts";

/** Every domain's resolvers; a new area adds its map here. */
export const domainResolvers: Resolvers[] = [
  accountResolvers,
  catalogueResolvers,
  endpointResolvers,
  registryResolvers,
];
