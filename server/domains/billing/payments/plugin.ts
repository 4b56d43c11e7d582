import type { Logger } from "pino";
import type { DomainPlugin } from "../../../graphql/plugin.ts";
import type { Db } from "../../../platform/db/index.ts";
import type { DomainEvents } from "../../../platform/events.ts";
import { runEvery } from "../../../platform/periodic.ts";
import type { PaymentProvider } from "./provider.ts";
import { paymentsResolvers } from "./resolvers.ts";
import { collectOpenInvoices, type PaymentsDeps } from "./service.ts";

export interface PaymentsPluginDeps {
  db: Db;
  log: Logger;
  events: DomainEvents;
  /** The one provider in use (app.ts chooses it from the configuration). */
  provider: PaymentProvider;
  /** How often open invoices are looked for and charged (the billing clock's period). */
  clockMs: number;
}

/**
 * Payments: the API (payment method, charges, retry) and the collection clock, which charges each open
 * invoice once, automatically, to the account's payment method.
 */
export const paymentsPlugin: DomainPlugin<PaymentsPluginDeps> = async (app, { deps, api }) => {
  const payments: PaymentsDeps = { db: deps.db, events: deps.events, provider: deps.provider };
  api.add(paymentsResolvers(payments));
  deps.log.info({ provider: deps.provider.id, connected: deps.provider.connected }, "payments: provider in use");
  const clock = runEvery(
    deps.clockMs,
    async () => {
      const attempted = await collectOpenInvoices(payments);
      if (attempted > 0) deps.log.info({ attempted }, "payments: charged open invoices");
    },
    (error) => deps.log.error({ err: error }, "payments: charging open invoices failed"),
  );
  app.addHook("onClose", async () => clock.stop());
};
