import type { Resolvers } from "../graphql/resolvers.ts";
import { registryResolvers } from "../registry/resolvers.ts";
import { accountResolvers } from "./account/resolvers.ts";
import { catalogueResolvers } from "./catalogue/resolvers.ts";
import { endpointResolvers } from "./endpoints/resolvers.ts";
import { errorLogResolvers } from "./errorlogs/resolvers.ts";
import { functionResolvers } from "./functions/resolvers.ts";
import { rateLimitResolvers } from "./ratelimits/resolvers.ts";
import { securityResolvers } from "./security/resolvers.ts";
import { streamResolvers } from "./streams/resolvers.ts";
import { usageResolvers } from "./usage/resolvers.ts";
import { webhookResolvers } from "./webhooks/resolvers.ts";

/** Every domain's resolvers; a new area adds its map here. */
export const domainResolvers: Resolvers[] = [
  accountResolvers,
  catalogueResolvers,
  endpointResolvers,
  securityResolvers,
  registryResolvers,
  streamResolvers,
  functionResolvers,
  webhookResolvers,
  rateLimitResolvers,
  usageResolvers,
  errorLogResolvers,
];
