import type { DomainPlugin } from "../../graphql/plugin.ts";
import { usageResolvers } from "./resolvers.ts";

/** The account's usage and credits. It needs nothing of the running service but the database (the context's). */
export const usagePlugin: DomainPlugin<Record<string, never>> = async (_app, { api }) => {
  api.add(usageResolvers);
};
