import type { Logger } from "pino";
import type { DomainPlugin } from "../../graphql/plugin.ts";
import type { AppConfig } from "../../platform/config.ts";
import type { Db } from "../../platform/db/index.ts";
import { AppError } from "../../platform/errors.ts";
import type { DomainEvents } from "../../platform/events.ts";
import { runEvery } from "../../platform/periodic.ts";
import { SESSION_COOKIE } from "../account/service.ts";
import type { SessionCache } from "../account/sessions.ts";
import type { AddonCharges } from "./addon-charges.ts";
import { type InvoiceDocument, invoiceDocument } from "./invoice-document.ts";
import { billingResolvers } from "./resolvers.ts";
import { type BillingDeps, closeEndedPeriodsOfAll } from "./service.ts";

export interface BillingPluginDeps {
  db: Db;
  log: Logger;
  events: DomainEvents;
  sessions: SessionCache;
  settings: AppConfig["billing"];
  /** The add-on marketplace's prices of a period's installs (addon-charges.ts). */
  addons: AddonCharges;
}

/**
 * Billing: the API, the invoice PDFs (`GET /billing/invoices/<id>/pdf`, for a signed-in member of the
 * invoice's account, any role) and the billing clock, which closes the periods that ended.
 */
export const billingPlugin: DomainPlugin<BillingPluginDeps> = async (app, { deps, api }) => {
  const billing: BillingDeps = {
    db: deps.db,
    events: deps.events,
    addons: deps.addons,
    taxRateBps: deps.settings.taxRateBps,
  };
  api.add(billingResolvers(billing));

  app.get<{ Params: { id: string } }>("/billing/invoices/:id/pdf", async (request, reply) => {
    const principal = await deps.sessions.resolve(request.cookies[SESSION_COOKIE]);
    if (!principal) return reply.code(401).send({ error: "Sign in first.", code: "UNAUTHENTICATED" });
    let document: InvoiceDocument;
    try {
      document = await invoiceDocument(deps.db, principal.accountId, request.params.id);
    } catch (error) {
      // Another account's invoice, like one that does not exist, is not found.
      if (error instanceof AppError && error.code === "NOT_FOUND") {
        return reply.code(404).send({ error: error.message, code: error.code });
      }
      throw error;
    }
    return reply
      .type("application/pdf")
      .header("content-disposition", `attachment; filename="${document.filename}"`)
      .header("cache-control", "private, no-store")
      .send(document.body);
  });

  const clock = runEvery(
    deps.settings.clockMs,
    async () => {
      const closed = await closeEndedPeriodsOfAll(billing);
      if (closed > 0) deps.log.info({ closed }, "billing: closed periods into invoices");
    },
    (error) => deps.log.error({ err: error }, "billing: closing periods failed"),
  );
  app.addHook("onClose", async () => clock.stop());
};
