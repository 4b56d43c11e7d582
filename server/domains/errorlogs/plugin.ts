import type { DomainPlugin } from "../../graphql/plugin.ts";
import { errorLogResolvers } from "./resolvers.ts";

/** The endpoints' error logs. It needs nothing of the running service but the database (the context's). */
export const errorLogsPlugin: DomainPlugin<Record<string, never>> = async (_app, { api }) => {
  api.add(errorLogResolvers);
};
