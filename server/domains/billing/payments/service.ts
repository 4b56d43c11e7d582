import { randomUUID } from "node:crypto";
import type { Db, Executor } from "../../../platform/db/index.ts";
import { AppError, conflict, foundOr, notFound } from "../../../platform/errors.ts";
import type { DomainEvents } from "../../../platform/events.ts";
import { isUuid } from "../../../platform/ids.ts";
import { connection, cursorArgument, pageSize } from "../../../platform/paging.ts";
import { changeSubscription, listMembers, lockedSubscription } from "../../account/service.ts";
import { PAST_DUE, settlePaidInvoice } from "../service.ts";
import { lockedInvoice } from "../store.ts";
import type {
  ChargeOutcome,
  PaymentAuthentication,
  PaymentProvider,
  PaymentSource,
  ProviderCustomer,
} from "./provider.ts";
import * as store from "./store.ts";

/** What payments run on: the database, the events other parts follow, and the one provider in use. */
export interface PaymentsDeps {
  db: Db;
  events: DomainEvents;
  provider: PaymentProvider;
}

/** Subscription statuses payments move between: a failed charge makes it past due, paying every invoice active again. */

const BRANDS: Record<string, string> = {
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  discover: "Discover",
};

/** How a method reads to the user: "Visa ending 4242", "STRIPE TEST BANK ending 6789". */
export function methodLabel(method: Pick<store.PaymentMethodRow, "kind" | "brand" | "bankName" | "last4">): string {
  const name =
    method.kind === "card"
      ? (BRANDS[method.brand ?? ""] ?? method.brand ?? "Card")
      : (method.bankName ?? "Bank account");
  return `${name} ending ${method.last4}`;
}

async function customerOf(db: Db, accountId: string): Promise<ProviderCustomer> {
  const row = await store.getCustomer(db, accountId);
  const owner = (await listMembers(db, accountId)).find((m) => m.role === "OWNER");
  return {
    accountId,
    email: owner?.user.email ?? "",
    name: row?.name ?? null,
    customerRef: row?.stripeCustomerId ?? null,
  };
}

/**
 * Attaches the card, bank account or token to the account at the provider and keeps what may be shown
 * of it (never the number), replacing the method before. A refusal (a declined card, an unknown number)
 * is BAD_USER_INPUT naming the field, and nothing is written.
 */
export async function updatePaymentMethod(deps: PaymentsDeps, accountId: string, source: PaymentSource) {
  const attached = await deps.provider.attach(await customerOf(deps.db, accountId), source);
  await deps.db.transaction(async (tx) => {
    await store.putMethod(tx, accountId, {
      provider: deps.provider.id,
      kind: attached.kind,
      brand: attached.brand,
      last4: attached.last4,
      expMonth: attached.expMonth,
      expYear: attached.expYear,
      bankName: attached.bankName,
      providerRef: attached.providerRef,
    });
    if (attached.customerRef) await store.putCustomer(tx, accountId, { stripeCustomerId: attached.customerRef });
  });
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
  return foundOr(await store.getMethod(deps.db, accountId), "The payment method");
}

export const paymentMethodOf = (db: Db, accountId: string) => store.getMethod(db, accountId);

/**
 * Charges the invoice's amount due to the account's payment method, once per idempotency key: the same
 * key again (a retried request, or two at once) answers the charge the first made. One transaction on
 * the subscription's row lock (the order the period's close takes it in), then the invoice's: a charge
 * and its record, the invoice paid or the subscription past due, are written together or not at all. A
 * provider that cannot be reached rolls it all back; its own idempotency key makes the retry safe.
 */
export async function payInvoice(deps: PaymentsDeps, accountId: string, invoiceId: string, idempotencyKey: string) {
  if (!isUuid(invoiceId)) throw notFound("The invoice");
  const charge = await deps.db.transaction(async (tx) => {
    foundOr(await lockedSubscription(tx, accountId), "The subscription");
    const invoice = foundOr(await lockedInvoice(tx, accountId, invoiceId), "The invoice");
    const done = await store.chargeByKey(tx, accountId, idempotencyKey);
    if (done) {
      if (done.invoiceId !== invoiceId) throw conflict("This idempotency key was used for another invoice.");
      return done;
    }
    if (invoice.status !== "open" || invoice.amountRemainingCents <= 0) {
      throw conflict(`Invoice ${invoice.number} is ${invoice.status}: there is nothing to pay.`);
    }
    const method = await store.getMethod(tx, accountId);
    if (!method) throw conflict("Add a payment method first.");
    if (method.provider !== deps.provider.id) {
      throw conflict(
        `Your payment method was added with the ${method.provider} provider, which is not in use: add it again.`,
      );
    }
    const outcome = await deps.provider.charge({
      customer: await customerOf(deps.db, accountId),
      methodRef: method.providerRef,
      amountCents: invoice.amountRemainingCents,
      currency: invoice.currency,
      description: `Nodeplane invoice ${invoice.number}`,
      idempotencyKey: `${accountId}:${idempotencyKey}`,
    });
    const row = await store.insertCharge(tx, accountId, {
      invoiceId,
      idempotencyKey,
      provider: deps.provider.id,
      providerChargeId: outcome.providerChargeId,
      amountCents: invoice.amountRemainingCents,
      currency: invoice.currency,
      status: outcome.status,
      failureCode: outcome.failureCode,
      failureMessage: outcome.failureMessage,
      nextActionUrl: outcome.nextActionUrl,
      methodLabel: methodLabel(method),
      cardLast4: method.kind === "card" ? method.last4 : null,
    });
    await settleInvoice(tx, accountId, invoice, outcome.status);
    return row;
  });
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
  return charge;
}

/**
 * The one rule of what a charge's outcome does to its invoice and the subscription: paid, as any payment
 * in full does (settlePaidInvoice); declined or waiting for the payer, the subscription past due and the
 * invoice open.
 */
async function settleInvoice(
  tx: Executor,
  accountId: string,
  invoice: { id: string; status: string },
  outcome: ChargeOutcome["status"],
) {
  if (outcome === "succeeded") {
    await settlePaidInvoice(tx, accountId, invoice);
  } else {
    await changeSubscription(tx, accountId, { status: PAST_DUE });
  }
}

/**
 * Confirms a charge that asked for the payer's action (3-D Secure), once they acted: the provider says
 * how it ended, and the charge, the invoice and the subscription move together as a charge's outcome
 * moves them (settleInvoice). Under the subscription's lock, then the charge's and the invoice's: a
 * second confirmation, retried or at once, finds the charge settled and answers it without asking the
 * provider again, so an invoice is paid once. A charge whose invoice was paid meanwhile (another
 * charge, crypto) is CONFLICT and nothing is asked.
 */
export async function confirmPayment(
  deps: PaymentsDeps,
  accountId: string,
  input: { chargeId: string; authentication: PaymentAuthentication | null },
) {
  if (!isUuid(input.chargeId)) throw notFound("The charge");
  const charge = await deps.db.transaction(async (tx) => {
    foundOr(await lockedSubscription(tx, accountId), "The subscription");
    const waiting = foundOr(await store.lockedCharge(tx, accountId, input.chargeId), "The charge");
    if (waiting.status !== store.REQUIRES_ACTION) return waiting;
    const invoice = foundOr(await lockedInvoice(tx, accountId, waiting.invoiceId), "The invoice");
    if (invoice.status !== "open" || invoice.amountRemainingCents <= 0) {
      throw conflict(`Invoice ${invoice.number} is ${invoice.status}: this payment has nothing left to confirm.`);
    }
    if (waiting.provider !== deps.provider.id || !waiting.providerChargeId) {
      throw conflict(
        `This charge was made with the ${waiting.provider} provider, which is not in use: pay the invoice again.`,
      );
    }
    const outcome = await deps.provider.confirm({
      customer: await customerOf(deps.db, accountId),
      providerChargeId: waiting.providerChargeId,
      authentication: input.authentication,
      idempotencyKey: `${accountId}:confirm:${waiting.id}`,
    });
    const settled = await store.settleCharge(tx, accountId, waiting.id, {
      status: outcome.status,
      failureCode: outcome.failureCode,
      failureMessage: outcome.failureMessage,
      nextActionUrl: outcome.nextActionUrl,
    });
    await settleInvoice(tx, accountId, invoice, outcome.status);
    return settled;
  });
  await deps.events.emitAndWait("viewer.changed", { accountId, userId: null });
  if (charge.status === "failed") throw refusal(charge);
  return charge;
}

/** Of these invoices, the charge each waits on for the payer's action, by invoice id. */
export async function chargesAwaitingAction(db: Db, accountId: string, invoiceIds: readonly string[]) {
  const waiting = await store.chargesAwaitingAction(db, accountId, invoiceIds);
  return new Map(waiting.map((c) => [c.invoiceId, c]));
}

/** What the payer is told of a charge that did not go through. */
function refusal(charge: store.PaymentChargeRow): AppError {
  const why = charge.failureMessage ?? "The payment did not go through.";
  return new AppError(
    "BAD_USER_INPUT",
    `${charge.methodLabel}: ${why}${charge.failureCode ? ` (${charge.failureCode})` : ""} The invoice stays open and the subscription past due: change the payment method and retry.`,
  );
}

/**
 * The user's retry of an open invoice's payment. The key is the caller's (a client retrying a request
 * sends the same one), or a new one per call. A decline is recorded, then answered as an error.
 */
export async function retryPayment(
  deps: PaymentsDeps,
  accountId: string,
  input: { invoiceId: string; idempotencyKey?: string },
) {
  const charge = await payInvoice(deps, accountId, input.invoiceId, input.idempotencyKey ?? `retry:${randomUUID()}`);
  if (charge.status !== "succeeded") throw refusal(charge);
  return charge;
}

/**
 * The clock's collection: each open invoice of an account with a payment method is charged once,
 * automatically (its key `auto:<invoice id>` makes a second tick or process find it done). Returns how
 * many charges were attempted; declines make their subscriptions past due and wait for a retry.
 */
export async function collectOpenInvoices(deps: PaymentsDeps, batch = 200): Promise<number> {
  let attempted = 0;
  // An invoice refused without a charge (its method is another provider's) stays due: it is asked once.
  const seen = new Set<string>();
  for (;;) {
    const due = (await store.invoicesToCollect(deps.db, batch + seen.size)).filter((d) => !seen.has(d.invoiceId));
    if (due.length === 0) return attempted;
    for (const { accountId, invoiceId } of due) {
      seen.add(invoiceId);
      try {
        await payInvoice(deps, accountId, invoiceId, store.automaticChargeKey(invoiceId));
      } catch (error) {
        // The invoice was paid, or the method replaced, meanwhile: nothing is due from this tick.
        if (!(error instanceof AppError && error.code === "CONFLICT")) throw error;
      }
      attempted++;
    }
  }
}

export async function chargePage(db: Db, accountId: string, args: { first?: number | null; after?: string | null }) {
  const size = pageSize(args.first);
  const after = cursorArgument(args.after, ["timestamp", "uuid"] as const);
  const rows = await store.listCharges(db, accountId, after, size + 1);
  return connection(rows, size, (r) => [r.createdAt, r.id]);
}

/** One charge of the account (another account's, like none, is not found). */
export const chargeOrFail = async (db: Db, accountId: string, id: string) =>
  foundOr(isUuid(id) ? await store.chargeById(db, accountId, id) : undefined, "The charge");

/** The provider's customer id of the account (Stripe's cus_…), once one was made. */
export const providerCustomerRef = async (db: Db, accountId: string) =>
  (await store.getCustomer(db, accountId))?.stripeCustomerId ?? null;
