import type { Logger } from "pino";
import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { Db } from "../../platform/db/index.ts";
import { HOUSEKEEPING_EVERY_MS, runEvery } from "../../platform/periodic.ts";
import type { SessionCache } from "../account/sessions.ts";
import type { StreamsServices } from "../streams/runtime.ts";
import type { AccessKeys } from "../tokens/keys.ts";
import { registerFunctionCalls } from "./http.ts";
import { functionResolvers } from "./resolvers.ts";
import { type FunctionRuns, pruneRunLogs } from "./service.ts";

export interface FunctionsDeps extends StreamsServices {
  db: Db;
  /** The function runs of this process (made by app.ts: FUNCTION destinations share them). */
  runs: FunctionRuns;
  /** Who a function call's session cookie belongs to. */
  sessions: SessionCache;
  /** Who a function call's x-api-key belongs to (a FUNCTIONS_REST key). */
  accessKeys: AccessKeys;
  log: Logger;
}

/**
 * Functions: the API, their HTTP address (`POST /functions/<id>/call`), and the housekeeping that empties
 * runs' logs past their plan's retention.
 */
export const functionsPlugin: DomainPlugin<FunctionsDeps> = async (app, { deps, api }) => {
  api.add(functionResolvers(deps));
  registerFunctionCalls(app, {
    db: deps.db,
    sessions: deps.sessions,
    accessKeys: deps.accessKeys,
    services: deps,
    runs: deps.runs,
  });
  const housekeeping = runEvery(
    HOUSEKEEPING_EVERY_MS,
    () => pruneRunLogs(deps.db),
    (error) => deps.log.warn({ err: error }, "housekeeping of function runs' logs failed"),
  );
  app.addHook("onClose", async () => housekeeping.stop());
};
