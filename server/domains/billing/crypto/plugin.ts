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
    addressOf: deps.settings.mnemonic ? depositAddressesAtFirstCharge(deps.settings.mnemonic) : null,
  };
  api.add(cryptoChargeResolvers(charges));
  const watcher = startChargeWatcher(charges, deps.log);
  app.addHook("onClose", async () => watcher.stop());
};

/**
 * The deposit addresses, loaded and derived when the first charge wants one: viem's packages and the
 * mnemonic's key stretching are ~0.15 s of a restart, which needs neither to answer.
 */
function depositAddressesAtFirstCharge(mnemonic: string): (index: number) => Promise<string> {
  let derived: Promise<(index: number) => string> | null = null;
  return async (index) => {
    derived ??= import("./addresses.ts").then(({ depositAddresses }) => depositAddresses(mnemonic));
    return (await derived)(index);
  };
}
