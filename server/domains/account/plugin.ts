import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { Db } from "../../platform/db/index.ts";
import { type AccountApiDeps, accountResolvers } from "./resolvers.ts";
import { SignUpLimits } from "./service.ts";
import { SignInGuard } from "./sign-in-guard.ts";
import { ResendLimits } from "./verification.ts";
import { ViewerModel } from "./viewer-model.ts";

export type AccountDeps = Omit<AccountApiDeps, "viewers" | "signInGuard" | "signUpLimits" | "resendLimits"> & {
  db: Db;
  /** New accounts a client address may make in an hour (config.signUpsPerHour). */
  signUpsPerHour: number;
};

/**
 * Sign-up, sign-in and sessions, the viewer (its rows kept in the process), the team. The limits on
 * guessing and flooding are made here, one set per service (their counts are in PostgreSQL, shared by
 * every process; what they hold in memory is this service's).
 */
export const accountPlugin: DomainPlugin<AccountDeps> = async (_app, { deps, api }) => {
  const { db, signUpsPerHour, ...apiDeps } = deps;
  api.add(
    accountResolvers({
      ...apiDeps,
      viewers: new ViewerModel(deps.events),
      signInGuard: new SignInGuard(db),
      signUpLimits: new SignUpLimits(db, signUpsPerHour),
      resendLimits: new ResendLimits(db),
    }),
  );
};
