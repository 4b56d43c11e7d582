import type { Logger } from "pino";
import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { Db } from "../../platform/db/index.ts";
import { HOUSEKEEPING_EVERY_MS, runEvery } from "../../platform/periodic.ts";
import { kvPartRoutes } from "./part-route.ts";
import type { LocalPartStorage, PartStorage } from "./part-storage.ts";
import { kvResolvers } from "./resolvers.ts";
import { CompletingUploads, sweepExpiredUploads } from "./uploads.ts";

export interface KvDeps {
  db: Db;
  /** Where the parts of uploads are kept (the data directory, or S3). */
  kvParts: PartStorage;
  /** The data directory's storage, when parts are PUT to this service (no S3 bucket keeps them). */
  localParts: LocalPartStorage | null;
  log: Logger;
}

/**
 * The key-value store: the API, the route uploads' parts are PUT to (without S3), and the housekeeping that
 * ends uploads past their time (their parts deleted) although their account never initiates another.
 */
export const kvPlugin: DomainPlugin<KvDeps> = async (app, { deps, api }) => {
  api.add(kvResolvers({ kvParts: deps.kvParts, completing: new CompletingUploads() }));
  if (deps.localParts) await kvPartRoutes(app, { db: deps.db, storage: deps.localParts });
  const housekeeping = runEvery(
    HOUSEKEEPING_EVERY_MS,
    () => sweepExpiredUploads(deps.db, deps.kvParts),
    (error) => deps.log.warn({ err: error }, "housekeeping of key-value uploads failed"),
  );
  app.addHook("onClose", async () => housekeeping.stop());
};
