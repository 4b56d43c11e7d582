import type { Logger } from "pino";
import type { UpstreamMap } from "../../../dataplane/chain/nodes.ts";
import type { DomainPlugin } from "../../../graphql/plugin.ts";
import type { CryptoChargeSettings } from "../../../platform/config.ts";
import type { Db } from "../../../platform/db/index.ts";
import type { DomainEvents } from "../../../platform/events.ts";
import { cryptoChargeResolvers } from "./resolvers.ts";
import type { CryptoChargeDeps } from "./service.ts";
import { startChargeWatcher } from "./watcher.ts";

export interface CryptoChargesPluginDeps {
  db: Db;
  log: Logger;
  events: DomainEvents;
  upstreams: UpstreamMap;
  settings: CryptoChargeSettings;
}

/** Crypto charges: the API, and the watcher that moves them as payments reach their addresses. */
export const cryptoChargesPlugin: DomainPlugin<CryptoChargesPluginDeps> = async (app, { deps, api }) => {
  const charges: CryptoChargeDeps = {
    db: deps.db,
    events: deps.events,
    upstreams: deps.upstreams,
    settings: deps.settings,
    // Loaded only where charges are watched: its packages (viem) are ~0.3 s of a start.
    addressOf: deps.settings.mnemonic
      ? (await import("./addresses.ts")).depositAddresses(deps.settings.mnemonic)
      : null,
  };
  api.add(cryptoChargeResolvers(charges));
  const watcher = startChargeWatcher(charges, deps.log);
  app.addHook("onClose", async () => watcher.stop());
};
