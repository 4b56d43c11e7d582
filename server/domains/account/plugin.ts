import type { DomainPlugin } from "../../graphql/plugin.ts";
import { type AccountApiDeps, accountResolvers } from "./resolvers.ts";

/** Sign-up, sign-in and sessions, the viewer, the team. */
export const accountPlugin: DomainPlugin<AccountApiDeps> = async (_app, { deps, api }) => {
  api.add(accountResolvers(deps));
};
