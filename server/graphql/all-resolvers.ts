import { accountResolvers } from "../domains/account/resolvers.ts";
import { catalogueResolvers } from "../domains/catalogue/resolvers.ts";
import { endpointResolvers } from "../domains/endpoints/resolvers.ts";
import { errorLogResolvers } from "../domains/errorlogs/resolvers.ts";
import { functionResolvers } from "../domains/functions/resolvers.ts";
import { kvResolvers } from "../domains/kv/resolvers.ts";
import { rateLimitResolvers } from "../domains/ratelimits/resolvers.ts";
import { securityResolvers } from "../domains/security/resolvers.ts";
import { streamResolvers } from "../domains/streams/resolvers.ts";
import { usageResolvers } from "../domains/usage/resolvers.ts";
import { webhookResolvers } from "../domains/webhooks/resolvers.ts";
import { registryResolvers } from "../registry/resolvers.ts";
import type { Resolvers } from "./resolvers.ts";

/** Every resolver map of the API (each domain's and the registry's); a new area adds its map here. */
export const allResolvers: Resolvers[] = [
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
  kvResolvers,
];
