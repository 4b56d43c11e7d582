import DataLoader from "dataloader";
import { type Context, loaderOf } from "../../../graphql/context.ts";
import { field, fieldWithInput, present } from "../../../graphql/field.ts";
import type { BusinessType } from "../../../graphql/generated/resolvers.ts";
import type { Resolvers } from "../../../graphql/resolvers.ts";
import type { Db } from "../../../platform/db/index.ts";
import { badInput, foundOr } from "../../../platform/errors.ts";
import { subscriptionOf } from "../../account/service.ts";
import { subscriptionView } from "../../account/subscription-view.ts";
import { accountBalance, invoiceWithLines } from "../service.ts";
import { accountBanners } from "./banners.ts";
import * as customer from "./customer.ts";
import type { PaymentSource } from "./provider.ts";
import * as service from "./service.ts";
import type { PaymentChargeRow, PaymentMethodRow, TaxIdRow } from "./store.ts";
import { taxIdTypes } from "./tax-ids.ts";
import { TEST_PAYMENT_NUMBERS } from "./test-numbers.ts";

/** The method as the API shows it (DefaultPaymentMethod): a card's brand, last four and expiry, or a bank's. */
function methodView(method: PaymentMethodRow | undefined) {
  if (!method) return null;
  return {
    provider: method.provider,
    label: service.methodLabel(method),
    card:
      method.kind === "card"
        ? {
            brand: method.brand ?? "card",
            last4: method.last4,
            expMonth: method.expMonth ?? 0,
            expYear: method.expYear ?? 0,
          }
        : null,
    ach: method.kind === "bank" ? { bankName: method.bankName ?? "", last4: method.last4 } : null,
  };
}

const chargeView = (c: PaymentChargeRow) => ({
  id: c.id,
  invoiceId: c.invoiceId,
  status: c.status,
  amount: c.amountCents,
  currency: c.currency,
  provider: c.provider,
  paymentMethod: c.methodLabel,
  cardLast4: c.cardLast4,
  failureCode: c.failureCode,
  failureMessage: c.failureMessage,
  idempotencyKey: c.idempotencyKey,
  nextActionUrl: c.nextActionUrl,
  createdAt: c.createdAt,
});

/** The charges waiting for the payer's action of a page of invoices, in one query (per account). */
const awaitingActionLoader = (ctx: Context) =>
  new DataLoader<{ accountId: string; invoiceId: string }, PaymentChargeRow | undefined, string>(
    async (keys) => {
      const byInvoice = await service.chargesAwaitingAction(
        ctx.db,
        keys[0].accountId,
        keys.map((k) => k.invoiceId),
      );
      return keys.map((k) => byInvoice.get(k.invoiceId));
    },
    // One request is one account's: the invoice id is the key.
    { cacheKeyFn: (k) => k.invoiceId },
  );

const taxIdView = (t: TaxIdRow) => ({
  id: t.id,
  type: t.type,
  value: t.value,
  country: t.country,
  createdAt: t.createdAt,
});

/** The billing customer as the API shows it (the spec's Billing customer), with its tax ids and method. */
async function customerView(db: Db, accountId: string, data?: customer.BillingCustomer) {
  const c = data ?? (await customer.customerOf(db, accountId));
  return {
    id: accountId,
    name: c.name,
    phone: c.phone,
    balance: await accountBalance(db, accountId),
    address: c.address,
    metadata: { businessType: c.businessType as BusinessType | null },
    taxIds: (await customer.taxIdsOf(db, accountId)).map(taxIdView),
    defaultPaymentMethod: methodView(await service.paymentMethodOf(db, accountId)),
  };
}

/** A charge with its invoice and the subscription, as they are after it (PaymentResult). */
async function paymentResult(db: Db, accountId: string, charge: PaymentChargeRow) {
  const { invoice, lines } = await invoiceWithLines(db, accountId, charge.invoiceId);
  const { subscription, plan } = foundOr(await subscriptionOf(db, accountId), "The subscription");
  return {
    charge: chargeView(charge),
    invoice: { ...invoice, lines },
    subscription: subscriptionView(subscription, plan),
  };
}

/** Exactly one of a card, a bank account or a token, for the provider in use. */
function sourceOf(
  providerId: string,
  input: { token?: string; paymentProviderId?: string; card?: PaymentSource & object; bankAccount?: object },
): PaymentSource {
  if (input.paymentProviderId && input.paymentProviderId !== providerId) {
    throw badInput([
      {
        pointer: "/paymentProviderId",
        message: `The ${input.paymentProviderId} provider is not in use here: ${providerId} is.`,
      },
    ]);
  }
  const given = [input.card && "card", input.bankAccount && "bankAccount", input.token && "token"].filter(Boolean);
  if (given.length !== 1) {
    throw badInput([
      {
        pointer: given.length === 0 ? "/card" : `/${given[1]}`,
        message: "Send one of a card, a bank account or a token.",
      },
    ]);
  }
  if (input.token) return { kind: "token", token: input.token };
  if (input.card) return input.card;
  return { kind: "bank", ...(input.bankAccount as { routingNumber: string; accountNumber: string }) };
}

export function paymentsResolvers(deps: service.PaymentsDeps): Resolvers {
  return {
    Query: {
      paymentProvider: field("VIEWER", () => ({
        id: deps.provider.id,
        name: deps.provider.name,
        description: deps.provider.description,
        connected: deps.provider.connected,
      })),
      testPaymentNumbers: field("VIEWER", () =>
        deps.provider.id === "builtin"
          ? TEST_PAYMENT_NUMBERS.map((t) => ({
              kind: t.kind,
              number: t.number,
              brand: t.brand,
              description: t.description,
            }))
          : [],
      ),
      accountBanners: field("VIEWER", ({ ctx, accountId }) => accountBanners(ctx.db, accountId)),
      billingCustomer: field("VIEWER", ({ ctx, accountId }) => customerView(ctx.db, accountId)),
      taxIds: field("VIEWER", async ({ ctx, accountId }) =>
        (await customer.taxIdsOf(ctx.db, accountId)).map(taxIdView),
      ),
      taxIdTypes: field("VIEWER", () =>
        taxIdTypes().map((t) => ({
          type: t.type,
          name: t.name,
          countries: t.countries.map((c) => ({ country: c.country, format: c.format, example: c.example })),
        })),
      ),
      paymentCharge: field("VIEWER", async ({ ctx, accountId, args }) =>
        chargeView(await service.chargeOrFail(ctx.db, accountId, args.id)),
      ),
      paymentCharges: field("VIEWER", async ({ ctx, accountId, args }) => {
        const page = await service.chargePage(ctx.db, accountId, args);
        return {
          edges: page.edges.map((e) => ({ cursor: e.cursor, node: chargeView(e.node) })),
          pageInfo: page.pageInfo,
        };
      }),
    },
    Invoice: {
      paymentAction: field("VIEWER", async ({ ctx, accountId, parent }) => {
        if (parent.status !== "open") return null;
        const charge = await loaderOf(ctx, awaitingActionLoader).load({ accountId, invoiceId: parent.id });
        return charge
          ? {
              chargeId: charge.id,
              title: "Authentication needed",
              provider: charge.provider,
              nextActionUrl: charge.nextActionUrl,
            }
          : null;
      }),
    },
    BillingSubscription: {
      defaultPaymentMethod: field("VIEWER", async ({ ctx, accountId }) =>
        methodView(await service.paymentMethodOf(ctx.db, accountId)),
      ),
      paymentProviderExId: field("VIEWER", async ({ ctx, accountId }) =>
        deps.provider.id === "stripe" ? await service.providerCustomerRef(ctx.db, accountId) : null,
      ),
      paymentProviderStatus: field("VIEWER", ({ parent }) => parent.status),
    },
    Mutation: {
      updatePaymentMethod: fieldWithInput(
        "ADMIN",
        { schema: "payment-method#/$defs/updateInput", of: (args) => present(args) },
        async ({ accountId, input }) => {
          const card = input.card ? { kind: "card" as const, ...input.card } : undefined;
          const method = await service.updatePaymentMethod(
            deps,
            accountId,
            sourceOf(deps.provider.id, { ...input, card }),
          );
          return foundOr(methodView(method), "The payment method");
        },
      ),
      updateBillingData: fieldWithInput(
        "ADMIN",
        { schema: "billing-customer#/$defs/updateInput", of: (args) => present(args.input) },
        async ({ ctx, accountId, args, input }) => {
          // An address sent as null clears it; the schema checks the fields that are sent.
          const address = args.input.address === null ? { address: null } : {};
          const data = await customer.updateBillingData(ctx.db, deps.events, accountId, { ...input, ...address });
          return customerView(ctx.db, accountId, data);
        },
      ),
      createTaxId: fieldWithInput("ADMIN", { schema: "tax-id#/$defs/createInput" }, async ({ ctx, accountId, input }) =>
        taxIdView(await customer.createTaxId(ctx.db, accountId, input)),
      ),
      updateTaxId: fieldWithInput(
        "ADMIN",
        { schema: "tax-id#/$defs/updateInput", of: (args) => present(args.input) },
        async ({ ctx, accountId, args, input }) =>
          taxIdView(await customer.updateTaxId(ctx.db, accountId, args.id, input)),
      ),
      deleteTaxId: field("ADMIN", async ({ ctx, accountId, args }) =>
        taxIdView(await customer.deleteTaxId(ctx.db, accountId, args.id)),
      ),
      confirmPayment: field("ADMIN", async ({ ctx, accountId, args }) => {
        const charge = await service.confirmPayment(deps, accountId, {
          chargeId: args.chargeId,
          authentication: args.authentication ?? null,
        });
        return paymentResult(ctx.db, accountId, charge);
      }),
      retryPayment: fieldWithInput(
        "ADMIN",
        { schema: "payment-method#/$defs/retryInput", of: (args) => present(args) },
        async ({ ctx, accountId, input }) => {
          return paymentResult(ctx.db, accountId, await service.retryPayment(deps, accountId, input));
        },
      ),
    },
  };
}
