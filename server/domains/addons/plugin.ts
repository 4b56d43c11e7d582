import type { Logger } from "pino";
import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { Db } from "../../platform/db/index.ts";
import { runEvery } from "../../platform/periodic.ts";
import { type AddonsApiDeps, addonsResolvers } from "./resolvers.ts";
import { settleDueInstalls } from "./service.ts";

export interface AddonsDeps extends AddonsApiDeps {
  db: Db;
  log: Logger;
}

/** How often installs whose period ended are settled: a removal or downgrade applies within a minute of its time. */
const SETTLE_EVERY_MS = 60_000;

/** The add-on marketplace: the catalogue's queries, installs and their transitions, and the period ends. */
export const addonsPlugin: DomainPlugin<AddonsDeps> = async (app, { deps, api }) => {
  api.add(addonsResolvers(deps));
  const settling = runEvery(
    SETTLE_EVERY_MS,
    () => settleDueInstalls(deps.db, deps.events),
    (error) => deps.log.warn({ err: error }, "settling add-on installs at their period's end failed"),
  );
  app.addHook("onClose", async () => settling.stop());
};
