// Payments that ask for the payer's action (3-D Secure) with the built-in provider: the charge waits as
// requires_action, the invoice says "Authentication needed", and confirmPayment settles it once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinProvider } from "../../server/domains/billing/payments/builtin.ts";
import { collectOpenInvoices, type PaymentsDeps } from "../../server/domains/billing/payments/service.ts";
import type { BillingDeps } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, type TestUser, useTestApp } from "../support/api.ts";
import { openInvoiceOf, untaxedBilling } from "../support/billing.ts";

// The clocks of the service under test are slowed down: the tests close periods and collect themselves.
const ctx = useTestApp({ NODEPLANE_BILLING_CLOCK_MS: "3600000" });
let db: Db;
let billing: BillingDeps;
let payments: PaymentsDeps;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 4);
  billing = untaxedBilling(db, ctx.app.services.events);
  payments = { db, events: ctx.app.services.events, provider: builtinProvider() };
});
afterAll(async () => {
  await db?.$client.end();
});

const AUTHENTICATION_CARD = "4000002760003184";

/** An account whose invoice's automatic charge asked for authentication: its invoice and that charge. */
async function waitingForAction(): Promise<{ user: TestUser; invoiceId: string; chargeId: string }> {
  const user = await signUp(ctx.app);
  await user.client.gqlOk("mutation($card: PaymentCardInput) { updatePaymentMethod(card: $card) { label } }", {
    card: { number: AUTHENTICATION_CARD, expMonth: 12, expYear: new Date().getUTCFullYear() + 1, cvc: "123" },
  });
  const invoiceId = await openInvoiceOf(db, billing, user);
  await collectOpenInvoices(payments);
  const action = (await invoiceOf(user.client, invoiceId)).paymentAction;
  if (!action) throw new Error("the automatic charge did not ask for action");
  return { user, invoiceId, chargeId: action.chargeId };
}

interface InvoiceState {
  id: string;
  status: string;
  amountRemainingCents: number;
  totalCents: number;
  paymentAction: { chargeId: string; title: string; provider: string; nextActionUrl: string | null } | null;
}

const invoiceOf = async (client: GqlClient, id: string) =>
  (
    await client.gqlOk<{ invoice: InvoiceState }>(
      "query($id: ID!) { invoice(id: $id) { id status amountRemainingCents totalCents paymentAction { chargeId title provider nextActionUrl } } }",
      { id },
    )
  ).invoice;

const confirm = (client: GqlClient, chargeId: string, authentication?: "COMPLETED" | "FAILED") =>
  client.gql<{
    confirmPayment: {
      charge: { id: string; status: string; amount: number };
      invoice: { status: string; amountRemainingCents: number };
      subscription: { status: string };
    };
  }>(
    "mutation($id: ID!, $a: PaymentAuthentication) { confirmPayment(chargeId: $id, authentication: $a) { charge { id status amount } invoice { status amountRemainingCents } subscription { status } } }",
    { id: chargeId, a: authentication },
  );

const chargesOf = async (accountId: string) =>
  (
    await db.$client.query(
      "select id, status, failure_code from payment_charges where account_id = $1 order by created_at",
      [accountId],
    )
  ).rows;

const subscriptionStatus = async (client: GqlClient) =>
  (await client.gqlOk<{ viewer: { subscription: { status: string } } }>("{ viewer { subscription { status } } }"))
    .viewer.subscription.status;

describe("a payment that asks for authentication", () => {
  it("waits as requires_action, shown on its invoice, and is paid once the payer authenticates", async () => {
    const { user, invoiceId, chargeId } = await waitingForAction();
    const before = await invoiceOf(user.client, invoiceId);
    expect(before).toMatchObject({
      status: "open",
      paymentAction: { chargeId, title: "Authentication needed", provider: "builtin", nextActionUrl: null },
    });
    expect(await subscriptionStatus(user.client)).toBe("past_due");
    expect(await chargesOf(user.viewer.id)).toEqual([
      { id: chargeId, status: "requires_action", failure_code: "authentication_required" },
    ]);

    const done = await confirm(user.client, chargeId, "COMPLETED");
    expect(done.errors).toBeUndefined();
    expect(done.data?.confirmPayment).toEqual({
      charge: { id: chargeId, status: "succeeded", amount: before.totalCents },
      invoice: { status: "paid", amountRemainingCents: 0 },
      subscription: { status: "active" },
    });
    expect((await invoiceOf(user.client, invoiceId)).paymentAction).toBeNull();
    expect(await chargesOf(user.viewer.id)).toEqual([{ id: chargeId, status: "succeeded", failure_code: null }]);
  });

  it("a failed authentication leaves the invoice open and the subscription past due, to be paid again", async () => {
    const { user, invoiceId, chargeId } = await waitingForAction();
    const failed = await confirm(user.client, chargeId, "FAILED");
    expect(failed.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(failed.errors?.[0]?.message).toMatch(
      /^Visa ending 3184: The payment's authentication failed\. \(payment_intent_authentication_failure\)/,
    );
    expect(await chargesOf(user.viewer.id)).toEqual([
      { id: chargeId, status: "failed", failure_code: "payment_intent_authentication_failure" },
    ]);
    const after = await invoiceOf(user.client, invoiceId);
    expect(after).toMatchObject({ status: "open", paymentAction: null });
    expect(after.amountRemainingCents).toBe(after.totalCents);
    expect(await subscriptionStatus(user.client)).toBe("past_due");
    // Confirming it again answers the same failure and asks nothing more.
    const again = await confirm(user.client, chargeId, "COMPLETED");
    expect(again.errors?.[0]?.message).toMatch(/payment_intent_authentication_failure/);
    expect(await chargesOf(user.viewer.id)).toHaveLength(1);

    // Paid again: a new charge asks again; this time the payer authenticates.
    const retried = await user.client.gql<{ retryPayment: unknown }>(
      "mutation($id: ID!) { retryPayment(invoiceId: $id) { charge { id } } }",
      { id: invoiceId },
    );
    expect(retried.errors?.[0]?.message).toMatch(/authenticate/);
    const second = (await invoiceOf(user.client, invoiceId)).paymentAction?.chargeId;
    expect(second).toBeDefined();
    expect(second).not.toBe(chargeId);
    expect((await confirm(user.client, second ?? "", "COMPLETED")).data?.confirmPayment.invoice.status).toBe("paid");
    expect(await subscriptionStatus(user.client)).toBe("active");
  });

  it("a retried confirmation pays once: at once, one after the other, and the first confirmation stands", async () => {
    const { user, invoiceId, chargeId } = await waitingForAction();
    const results = await Promise.all(Array.from({ length: 6 }, () => confirm(user.client, chargeId, "COMPLETED")));
    for (const r of results) expect(r.errors).toBeUndefined();
    expect(new Set(results.map((r) => r.data?.confirmPayment.charge.id))).toEqual(new Set([chargeId]));
    // A late "fail" does not undo a payment made.
    const late = await confirm(user.client, chargeId, "FAILED");
    expect(late.data?.confirmPayment).toMatchObject({ charge: { status: "succeeded" }, invoice: { status: "paid" } });
    expect(await chargesOf(user.viewer.id)).toEqual([{ id: chargeId, status: "succeeded", failure_code: null }]);
    // Nothing is left to pay: another charge of it is refused, the clock charges nothing more.
    const other = await user.client.gql("mutation($id: ID!) { retryPayment(invoiceId: $id) { charge { id } } }", {
      id: invoiceId,
    });
    expect(other.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    await collectOpenInvoices(payments);
    expect(await chargesOf(user.viewer.id)).toHaveLength(1);
  });

  it("needs the test bank's answer, an admin, and the account's own charge", async () => {
    const { user, invoiceId, chargeId } = await waitingForAction();
    const unanswered = await confirm(user.client, chargeId);
    expect(unanswered.errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/authentication", message: expect.stringMatching(/complete or fail/) },
    ]);
    const stranger = await signUp(ctx.app);
    expect((await confirm(stranger.client, chargeId, "COMPLETED")).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect((await confirm(user.client, "not-a-charge", "COMPLETED")).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    expect(await chargesOf(user.viewer.id)).toEqual([
      { id: chargeId, status: "requires_action", failure_code: "authentication_required" },
    ]);
    expect((await invoiceOf(user.client, invoiceId)).status).toBe("open");
  });

  it("has a banner of its own: authentication needed, not a decline; a failed authentication moves it to past due", async () => {
    const { user, invoiceId, chargeId } = await waitingForAction();
    const banners = async () =>
      (
        await user.client.gqlOk<{
          accountBanners: { pastDue: { id: string }[]; authenticationNeeded: { id: string; number: string }[] };
        }>("{ accountBanners { pastDue { id } authenticationNeeded { id number } } }")
      ).accountBanners;
    expect(await banners()).toEqual({
      pastDue: [],
      authenticationNeeded: [{ id: invoiceId, number: expect.stringMatching(/^NP-/) }],
    });
    await confirm(user.client, chargeId, "FAILED");
    expect(await banners()).toEqual({ pastDue: [{ id: invoiceId }], authenticationNeeded: [] });
  });
});
