import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type AccountApiDeps, accountResolvers } from "./resolvers.ts";
import { ViewerModel } from "./viewer-model.ts";

/** Sign-up, sign-in and sessions, the viewer (its rows kept in the process), the team. */
export const accountPlugin: DomainPlugin<Omit<AccountApiDeps, "viewers">> = async (_app, { deps, api }) => {
  api.add(accountResolvers({ ...deps, viewers: new ViewerModel(deps.events) }));
};
