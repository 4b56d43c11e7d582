import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectOpenInvoices, type PaymentsDeps } from "../../server/domains/billing/payments/service.ts";
import { stripeProvider } from "../../server/domains/billing/payments/stripe.ts";
import type { BillingDeps } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, type TestUser, useTestApp } from "../support/api.ts";
import { openInvoiceOf, untaxedBilling } from "../support/billing.ts";
import { type StripeDouble, startStripeDouble } from "../support/stripe-double.ts";

// The Stripe provider against a local server speaking the few endpoints it calls (Stripe cannot be
// reached from here). The server starts first: the service reads its address when it starts.
const SECRET = "sk_test_nodeplane_local";
const env: Record<string, string> = { NODEPLANE_BILLING_CLOCK_MS: "3600000", NODEPLANE_STRIPE_SECRET_KEY: SECRET };
let stripe: StripeDouble;
beforeAll(async () => {
  stripe = await startStripeDouble();
  env.NODEPLANE_STRIPE_API_URL = stripe.url;
});
const ctx = useTestApp(env);
let db: Db;
let billing: BillingDeps;
let payments: PaymentsDeps;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 4);
  billing = untaxedBilling(db, ctx.app.services.events);
  payments = {
    db,
    events: ctx.app.services.events,
    provider: stripeProvider({ secretKey: SECRET, apiUrl: new URL(stripe.url) }),
  };
});
afterAll(async () => {
  await db?.$client.end();
  await stripe?.close();
});

const setToken = (client: GqlClient, token: string) =>
  client.gql<{ updatePaymentMethod: { label: string; provider: string; card: { brand: string; last4: string } } }>(
    "mutation($token: String) { updatePaymentMethod(token: $token) { label provider card { brand last4 } } }",
    { token },
  );

const retry = (client: GqlClient, invoiceId: string, idempotencyKey?: string) =>
  client.gql<{ retryPayment: { charge: { id: string; status: string }; invoice: { status: string } } }>(
    "mutation($invoiceId: ID!, $key: String) { retryPayment(invoiceId: $invoiceId, idempotencyKey: $key) { charge { id status } invoice { status } subscription { status } } }",
    { invoiceId, key: idempotencyKey },
  );

const subscriptionOf = async (client: GqlClient) =>
  (
    await client.gqlOk<{ viewer: { subscription: { status: string; paymentProviderExId: string | null } } }>(
      "{ viewer { subscription { status paymentProviderExId } } }",
    )
  ).viewer.subscription;

const intentsOf = (user: TestUser) => stripe.intents.filter((i) => i.idempotencyKey.startsWith(`${user.viewer.id}:`));

describe("the Stripe provider", () => {
  it("is the provider in use when a key is set, and the console is told it is connected", async () => {
    const user = await signUp(ctx.app);
    const data = await user.client.gqlOk<{
      paymentProvider: { id: string; connected: boolean; description: string };
      testPaymentNumbers: unknown[];
    }>("{ paymentProvider { id connected description } testPaymentNumbers { number } }");
    expect(data.paymentProvider).toMatchObject({ id: "stripe", connected: true });
    expect(data.paymentProvider.description).toContain(stripe.url);
    expect(data.testPaymentNumbers).toEqual([]);
  });

  it("attaches a PaymentMethod to the account's one Stripe customer and makes it the default", async () => {
    const user = await signUp(ctx.app);
    const before = stripe.requests.length;
    const set = await setToken(user.client, "pm_card_visa");
    expect(set.errors).toBeUndefined();
    expect(set.data?.updatePaymentMethod).toEqual({
      label: "Visa ending 4242",
      provider: "stripe",
      card: { brand: "visa", last4: "4242" },
    });
    const calls = stripe.requests.slice(before);
    expect(calls.map((r) => r.path)).toEqual([
      "/v1/customers",
      "/v1/payment_methods/pm_card_visa/attach",
      expect.stringMatching(/^\/v1\/customers\/cus_/),
    ]);
    expect(calls.every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(true);
    expect(calls[0].body.get("metadata[accountId]")).toBe(user.viewer.id);
    const customer = calls[1].body.get("customer");
    expect(calls[2].body.get("invoice_settings[default_payment_method]")).toMatch(/^pm_/);
    expect((await subscriptionOf(user.client)).paymentProviderExId).toBe(customer);
    // A second method goes to the same customer.
    await setToken(user.client, "pm_card_mastercard");
    const again = stripe.requests.slice(before + 3);
    expect(again.map((r) => r.path)).not.toContain("/v1/customers");
    expect(again[0].body.get("customer")).toBe(customer);
  });

  it("refuses card numbers, an unknown token and a declined card naming the field", async () => {
    const user = await signUp(ctx.app);
    const number = await user.client.gql(
      'mutation { updatePaymentMethod(card: { number: "4242424242424242", expMonth: 12, expYear: 2090, cvc: "123" }) { label } }',
    );
    expect(number.errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/card", message: expect.stringMatching(/Stripe's own form/) },
    ]);
    const unknown = await setToken(user.client, "pm_nothing_here");
    expect(unknown.errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/token", message: "Stripe: No such PaymentMethod: 'pm_nothing_here'" },
    ]);
    const declined = await setToken(user.client, "pm_card_visa_chargeDeclined");
    expect(declined.errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/token", message: "Stripe: Your card was declined." },
    ]);
    const { viewer } = await user.client.gqlOk<{ viewer: { subscription: { defaultPaymentMethod: unknown } } }>(
      "{ viewer { subscription { defaultPaymentMethod { label } } } }",
    );
    expect(viewer.subscription.defaultPaymentMethod).toBeNull();
  });

  it("a retried payment is one PaymentIntent: the idempotency key reaches Stripe, and concurrent retries wait", async () => {
    const user = await signUp(ctx.app);
    const invoiceId = await openInvoiceOf(db, billing, user);
    await setToken(user.client, "pm_card_visa");
    const results = await Promise.all(Array.from({ length: 4 }, () => retry(user.client, invoiceId, "stripe-once")));
    for (const r of results) expect(r.errors).toBeUndefined();
    expect(new Set(results.map((r) => r.data?.retryPayment.charge.id)).size).toBe(1);
    expect(results[0].data?.retryPayment.invoice.status).toBe("paid");
    expect(intentsOf(user)).toEqual([
      expect.objectContaining({
        idempotencyKey: `${user.viewer.id}:stripe-once`,
        paymentMethod: expect.stringMatching(/^pm_/),
      }),
    ]);
  });

  it("a declined charge makes the subscription past due; a retry with a good PaymentMethod pays it", async () => {
    const user = await signUp(ctx.app);
    await setToken(user.client, "pm_card_chargeCustomerFail");
    const invoiceId = await openInvoiceOf(db, billing, user);
    await collectOpenInvoices(payments);
    expect(intentsOf(user)).toHaveLength(1);
    expect(intentsOf(user)[0].idempotencyKey).toBe(`${user.viewer.id}:auto:${invoiceId}`);
    expect((await subscriptionOf(user.client)).status).toBe("past_due");
    const declined = await retry(user.client, invoiceId);
    expect(declined.errors?.[0]?.message).toMatch(/^Visa ending 0341: Your card was declined\. \(card_declined\)/);
    await setToken(user.client, "pm_card_visa");
    const paid = await retry(user.client, invoiceId);
    expect(paid.data?.retryPayment).toMatchObject({ charge: { status: "succeeded" }, invoice: { status: "paid" } });
    expect((await subscriptionOf(user.client)).status).toBe("active");
    expect(intentsOf(user)).toHaveLength(3);
  });

  it("a Stripe that cannot be reached is UPSTREAM_FAILED, and nothing is written", async () => {
    const away = stripeProvider({ secretKey: SECRET, apiUrl: new URL("http://127.0.0.1:9") });
    const customer = {
      accountId: "00000000-0000-0000-0000-000000000000",
      email: "a@example.com",
      name: null,
      customerRef: null,
    };
    await expect(away.attach(customer, { kind: "token", token: "pm_card_visa" })).rejects.toMatchObject({
      code: "UPSTREAM_FAILED",
    });
  });
});

describe("a Stripe payment that asks for authentication", () => {
  const confirm = (client: GqlClient, chargeId: string) =>
    client.gql<{ confirmPayment: { charge: { id: string; status: string; nextActionUrl: string | null } } }>(
      "mutation($id: ID!) { confirmPayment(chargeId: $id) { charge { id status nextActionUrl } invoice { status } subscription { status } } }",
      { id: chargeId },
    );

  async function waiting() {
    const user = await signUp(ctx.app);
    await setToken(user.client, "pm_card_authenticationRequired");
    const invoiceId = await openInvoiceOf(db, billing, user);
    await collectOpenInvoices(payments);
    const { invoice } = await user.client.gqlOk<{
      invoice: { paymentAction: { chargeId: string; provider: string } | null };
    }>("query($id: ID!) { invoice(id: $id) { paymentAction { chargeId provider } } }", { id: invoiceId });
    expect(invoice.paymentAction?.provider).toBe("stripe");
    return { user, invoiceId, chargeId: invoice.paymentAction?.chargeId ?? "" };
  }

  it("is confirmed on session, sends the payer to the bank's page, and is paid once they authenticate", async () => {
    const { user, chargeId } = await waiting();
    const first = await confirm(user.client, chargeId);
    expect(first.errors).toBeUndefined();
    const url = first.data?.confirmPayment.charge.nextActionUrl ?? "";
    expect(first.data?.confirmPayment.charge.status).toBe("requires_action");
    expect(url).toMatch(new RegExp(`^${stripe.url}/bank/authenticate/pi_`));
    // Asked again before the payer acted: still waiting, at the same page, and no second intent.
    expect((await confirm(user.client, chargeId)).data?.confirmPayment.charge.nextActionUrl).toBe(url);
    await fetch(`${url}/complete`, { method: "POST" });
    const paid = await Promise.all([confirm(user.client, chargeId), confirm(user.client, chargeId)]);
    for (const r of paid) {
      expect(r.data?.confirmPayment).toMatchObject({
        charge: { id: chargeId, status: "succeeded", nextActionUrl: null },
        invoice: { status: "paid" },
        subscription: { status: "active" },
      });
    }
    expect(intentsOf(user)).toHaveLength(1);
    const confirms = stripe.requests.filter(
      (r) => r.path.endsWith("/confirm") && r.idempotencyKey?.startsWith(user.viewer.id),
    );
    expect(confirms.map((r) => r.idempotencyKey)).toEqual([`${user.viewer.id}:confirm:${chargeId}`]);
  });

  it("a failed authentication at the bank leaves the invoice open and the subscription past due", async () => {
    const { user, invoiceId, chargeId } = await waiting();
    const url = (await confirm(user.client, chargeId)).data?.confirmPayment.charge.nextActionUrl ?? "";
    await fetch(`${url}/fail`, { method: "POST" });
    const failed = await confirm(user.client, chargeId);
    expect(failed.errors?.[0]?.message).toMatch(/failed authentication.*\(payment_intent_authentication_failure\)/);
    expect((await subscriptionOf(user.client)).status).toBe("past_due");
    const { invoice } = await user.client.gqlOk<{ invoice: { status: string; paymentAction: unknown } }>(
      "query($id: ID!) { invoice(id: $id) { status paymentAction { chargeId } } }",
      { id: invoiceId },
    );
    expect(invoice).toEqual({ status: "open", paymentAction: null });
    // The payer's answer is the bank's to give, not ours.
    const told = await user.client.gql(
      "mutation($id: ID!) { confirmPayment(chargeId: $id, authentication: COMPLETED) { charge { id } } }",
      { id: chargeId },
    );
    expect(told.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});
