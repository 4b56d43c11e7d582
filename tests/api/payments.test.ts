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

const nextYear = new Date().getUTCFullYear() + 1;
const card = (number: string, expYear = nextYear) => ({ number, expMonth: 12, expYear, cvc: "123" });

const setCard = (client: GqlClient, number: string, expYear = nextYear) =>
  client.gql<{ updatePaymentMethod: { label: string; provider: string; card: { brand: string; last4: string } } }>(
    "mutation($card: PaymentCardInput) { updatePaymentMethod(card: $card) { label provider card { brand last4 expMonth expYear } ach { bankName last4 } } }",
    { card: card(number, expYear) },
  );

const retry = (client: GqlClient, invoiceId: string, idempotencyKey?: string) =>
  client.gql<{
    retryPayment: {
      charge: { id: string; status: string };
      invoice: { status: string };
      subscription: { status: string };
    };
  }>(
    "mutation($invoiceId: ID!, $key: String) { retryPayment(invoiceId: $invoiceId, idempotencyKey: $key) { charge { id status amount paymentMethod } invoice { status amountRemainingCents } subscription { status isActive } } }",
    { invoiceId, key: idempotencyKey },
  );

const state = async (client: GqlClient) =>
  await client.gqlOk<{
    viewer: {
      subscription: { status: string; isActive: boolean; unpaidTotal: number; defaultPaymentMethod: unknown };
    };
    paymentCharges: { edges: { node: { id: string; status: string; amount: number; failureCode: string | null } }[] };
    invoices: { edges: { node: { id: string; status: string; totalCents: number; amountRemainingCents: number } }[] };
  }>(
    `{ viewer { subscription { status isActive unpaidTotal defaultPaymentMethod { label card { last4 } } } }
         paymentCharges(first: 50) { edges { node { id status amount failureCode } } }
         invoices(first: 50) { edges { node { id status totalCents amountRemainingCents } } } }`,
  );

const owing = (user: TestUser) => openInvoiceOf(db, billing, user);

const chargesOf = async (accountId: string) =>
  (await db.$client.query("select status from payment_charges where account_id = $1", [accountId])).rows;

describe("the payment method", () => {
  it("keeps a card's brand, last four digits and expiry, never its number", async () => {
    const user = await signUp(ctx.app);
    const set = await setCard(user.client, "4242 4242 4242 4242");
    expect(set.errors).toBeUndefined();
    expect(set.data?.updatePaymentMethod).toMatchObject({
      label: "Visa ending 4242",
      provider: "builtin",
      card: { brand: "visa", last4: "4242", expMonth: 12, expYear: nextYear },
    });
    const rows = await db.$client.query(
      "select row_to_json(m)::text as row from payment_methods m where account_id = $1",
      [user.viewer.id],
    );
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0].row).not.toContain("4242424242424242");
    // A bank account replaces the card.
    const bank = await user.client.gqlOk<{ updatePaymentMethod: { ach: { bankName: string; last4: string } } }>(
      'mutation { updatePaymentMethod(bankAccount: { routingNumber: "110000000", accountNumber: "000123456789" }) { ach { bankName last4 } card { last4 } } }',
    );
    expect(bank.updatePaymentMethod).toEqual({ ach: { bankName: "STRIPE TEST BANK", last4: "6789" }, card: null });
  });

  it("refuses a declined, unknown, mistyped or expired card naming the field, and keeps the method before", async () => {
    const user = await signUp(ctx.app);
    await setCard(user.client, "5555555555554444");
    const cases: [string, number, string, RegExp][] = [
      ["4000000000000002", nextYear, "/card/number", /declined.*card_declined/],
      ["4000000000009995", nextYear, "/card/number", /insufficient funds/],
      ["4111111111111111", nextYear, "/card/number", /only its test numbers/],
      ["4242424242424241", nextYear, "/card/number", /check digit/],
      ["4242424242424242", 2001, "/card/expYear", /expired in 12\/2001/],
    ];
    for (const [number, year, pointer, message] of cases) {
      const r = await setCard(user.client, number, year);
      expect(r.errors?.[0]?.extensions?.code, number).toBe("BAD_USER_INPUT");
      expect(r.errors?.[0]?.extensions?.fields, number).toEqual([{ pointer, message: expect.stringMatching(message) }]);
    }
    const both = await user.client.gql(
      'mutation { updatePaymentMethod(token: "pm_card_visa", card: { number: "4242424242424242", expMonth: 1, expYear: 2090, cvc: "123" }) { label } }',
    );
    expect(both.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    const token = await user.client.gql('mutation { updatePaymentMethod(token: "pm_card_visa") { label } }');
    expect(token.errors?.[0]?.extensions?.fields).toEqual([expect.objectContaining({ pointer: "/token" })]);
    expect((await state(user.client)).viewer.subscription.defaultPaymentMethod).toEqual({
      label: "Mastercard ending 4444",
      card: { last4: "4444" },
    });
  });
});

describe("charging invoices", () => {
  it("a retried payment charges once: the same idempotency key, one after the other and at once", async () => {
    const user = await signUp(ctx.app);
    const invoiceId = await owing(user);
    await setCard(user.client, "4242424242424242");
    const results = await Promise.all(Array.from({ length: 6 }, () => retry(user.client, invoiceId, "pay-once-1")));
    for (const r of results) expect(r.errors).toBeUndefined();
    const ids = new Set(results.map((r) => r.data?.retryPayment.charge.id));
    expect(ids.size).toBe(1);
    expect(results[0].data?.retryPayment).toMatchObject({
      charge: { status: "succeeded" },
      invoice: { status: "paid" },
      subscription: { status: "active" },
    });
    const again = await retry(user.client, invoiceId, "pay-once-1");
    expect(again.data?.retryPayment.charge.id).toBe([...ids][0]);
    // Another key finds the invoice paid: nothing more is charged.
    const other = await retry(user.client, invoiceId, "pay-once-2");
    expect(other.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    const other2 = await Promise.all([retry(user.client, invoiceId), retry(user.client, invoiceId)]);
    for (const r of other2) expect(r.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    expect(await chargesOf(user.viewer.id)).toEqual([{ status: "succeeded" }]);
    const after = await state(user.client);
    expect(after.viewer.subscription.unpaidTotal).toBe(0);
    expect(after.paymentCharges.edges.map((e) => e.node.amount)).toEqual([
      after.invoices.edges.find((e) => e.node.id === invoiceId)?.node.totalCents,
    ]);
  });

  it("a declined charge makes the subscription past due; a retry with a good card pays it and makes it active", async () => {
    const user = await signUp(ctx.app);
    await setCard(user.client, "4000000000000341");
    const invoiceId = await owing(user);
    // The clock charges each open invoice once; a second tick (or process) finds it charged.
    expect(await collectOpenInvoices(payments)).toBeGreaterThanOrEqual(1);
    await collectOpenInvoices(payments);
    expect(await chargesOf(user.viewer.id)).toEqual([{ status: "failed" }]);
    let now = await state(user.client);
    expect(now.viewer.subscription).toMatchObject({ status: "past_due", isActive: false });
    expect(now.viewer.subscription.unpaidTotal).toBeGreaterThan(0);
    expect(now.paymentCharges.edges[0].node).toMatchObject({ status: "failed", failureCode: "card_declined" });

    const declined = await retry(user.client, invoiceId);
    expect(declined.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(declined.errors?.[0]?.message).toMatch(/^Visa ending 0341: Your card was declined\./);
    expect(await chargesOf(user.viewer.id)).toHaveLength(2);

    await setCard(user.client, "4242424242424242");
    const paid = await retry(user.client, invoiceId);
    expect(paid.errors).toBeUndefined();
    expect(paid.data?.retryPayment).toMatchObject({
      charge: { status: "succeeded" },
      invoice: { status: "paid" },
      subscription: { status: "active" },
    });
    now = await state(user.client);
    expect(now.viewer.subscription).toMatchObject({ status: "active", isActive: true, unpaidTotal: 0 });
    expect(now.paymentCharges.edges.map((e) => e.node.status)).toEqual(["succeeded", "failed", "failed"]);
  });

  it("a card that asks for authentication leaves the invoice open and says so", async () => {
    const user = await signUp(ctx.app);
    await setCard(user.client, "4000002760003184");
    const invoiceId = await owing(user);
    const r = await retry(user.client, invoiceId);
    expect(r.errors?.[0]?.message).toMatch(/authenticate/);
    const now = await state(user.client);
    expect(now.viewer.subscription.status).toBe("past_due");
    expect(now.invoices.edges.find((e) => e.node.id === invoiceId)?.node.status).toBe("open");
    expect(now.paymentCharges.edges[0].node.status).toBe("requires_action");
  });

  it("another account sees nothing and charges nothing of it", async () => {
    const owner = await signUp(ctx.app);
    const invoiceId = await owing(owner);
    await setCard(owner.client, "4242424242424242");
    const stranger = await signUp(ctx.app);
    await setCard(stranger.client, "4242424242424242");
    const r = await retry(stranger.client, invoiceId, "stolen");
    expect(r.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const theirs = await state(stranger.client);
    expect(theirs.paymentCharges.edges).toEqual([]);
    expect(await chargesOf(owner.viewer.id)).toEqual([]);
    // The same key in another account is that account's own.
    expect((await retry(owner.client, invoiceId, "stolen")).errors).toBeUndefined();
  });
});

describe("the provider in use", () => {
  it("is the built-in test provider, not connected, with its test numbers", async () => {
    const user = await signUp(ctx.app);
    const { paymentProvider, testPaymentNumbers } = await user.client.gqlOk<{
      paymentProvider: { id: string; connected: boolean; description: string };
      testPaymentNumbers: { kind: string; number: string }[];
    }>("{ paymentProvider { id connected description } testPaymentNumbers { kind number } }");
    expect(paymentProvider).toMatchObject({ id: "builtin", connected: false });
    expect(paymentProvider.description).toMatch(/No payment network is connected/);
    expect(testPaymentNumbers.map((t) => t.number)).toEqual(
      expect.arrayContaining(["4242424242424242", "4000000000000002", "4000002760003184", "000123456789"]),
    );
  });
});

describe("banners from the account's state", () => {
  const BANNERS =
    "{ accountBanners { pastDue { id number amountDue } limitReached { id name network } trialEnding { daysRemaining } } }";
  interface Banners {
    accountBanners: {
      pastDue: { id: string; number: string; amountDue: string }[];
      limitReached: { id: string; name: string }[];
      trialEnding: { daysRemaining: number }[];
    };
  }

  it("say past due while a failed payment leaves invoices open, an endpoint at its limit, and a trial ending", async () => {
    const user = await signUp(ctx.app);
    // A new account has nothing to say; a Free account has no trial.
    expect((await user.client.gqlOk<Banners>(BANNERS)).accountBanners).toEqual({
      pastDue: [],
      limitReached: [],
      trialEnding: [],
    });
    await setCard(user.client, "4000000000000341");
    const invoiceId = await owing(user);
    await retry(user.client, invoiceId);
    const { id: endpointId } = (
      await user.client.gqlOk<{ createEndpoint: { id: string } }>(
        'mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia", label: "busy" }) { id } }',
      )
    ).createEndpoint;
    await db.$client.query("update endpoints set status = 'LIMIT_REACHED' where id = $1", [endpointId]);
    await db.$client.query("update accounts set free_trial_ends_at = now() + interval '47 hours' where id = $1", [
      user.viewer.id,
    ]);
    const { accountBanners } = await user.client.gqlOk<Banners>(BANNERS);
    expect(accountBanners.pastDue).toEqual([
      {
        id: invoiceId,
        number: expect.stringMatching(/^NP-/),
        amountDue: expect.stringMatching(/^\$[0-9,]+\.[0-9]{2}$/),
      },
    ]);
    expect(accountBanners.limitReached).toEqual([{ id: endpointId, name: "busy", network: "ethereum-sepolia" }]);
    expect(accountBanners.trialEnding).toEqual([{ daysRemaining: 2 }]);

    // Paid: the past-due banner goes; a trial further away says nothing.
    await setCard(user.client, "4242424242424242");
    expect((await retry(user.client, invoiceId)).errors).toBeUndefined();
    await db.$client.query("update accounts set free_trial_ends_at = now() + interval '10 days' where id = $1", [
      user.viewer.id,
    ]);
    const after = (await user.client.gqlOk<Banners>(BANNERS)).accountBanners;
    expect(after.pastDue).toEqual([]);
    expect(after.trialEnding).toEqual([]);
    // Another account sees none of them.
    const stranger = await signUp(ctx.app);
    expect((await stranger.client.gqlOk<Banners>(BANNERS)).accountBanners.limitReached).toEqual([]);
  });
});
