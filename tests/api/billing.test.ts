import { inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketplaceCharges } from "../../server/domains/billing/addon-charges.ts";
import { type BillingDeps, closeEndedPeriod, closeEndedPeriodsOfAll } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, type TestUser, useTestApp } from "../support/api.ts";

// The billing clock of the service under test is slowed down: the tests close periods themselves.
const ctx = useTestApp({ NODEPLANE_BILLING_CLOCK_MS: "3600000", NODEPLANE_BILLING_TAX_BPS: "1000" });
let db: Db;
let deps: BillingDeps;

beforeAll(() => {
  db = openDatabase(ctx.app.database.url, 4);
  deps = { db, events: ctx.app.services.events, addons: marketplaceCharges, taxRateBps: 1000 };
});
afterAll(async () => {
  await db?.$client.end();
});

const SUBSCRIPTION = `id status interval endpointLimit requestsPerSecond responsesPerMonth currentPeriodStartDate currentPeriodEndDate
  plan { id prettyName price yearlyPrice overagePricePerMillionCredits trialDays features }
  isDowngradeScheduled downgradePlan { id } downgradeEndpointIds cancelationRequestedAt canceledAt pendingMigration
  licensedStartDate licensedEndDate coupon { id percentOff duration durationInMonths } unpaidTotal endDate
  upcomingInvoicePreview { amountDueCents baseAmountDueCents overageAmountDueCents subtotalCents totalDiscountAmountCents taxCents
    items { label kind amount } lines { type amount description currency } discounts { amount coupon { id } } }`;

interface Sub {
  id: string;
  endpointLimit: number;
  requestsPerSecond: number;
  plan: { id: string; price: number; features: string[] };
  isDowngradeScheduled: boolean;
  downgradeEndpointIds: string[];
  cancelationRequestedAt: string | null;
  canceledAt: string | null;
  upcomingInvoicePreview: {
    amountDueCents: number;
    overageAmountDueCents: number;
    subtotalCents: number;
    taxCents: number;
    totalDiscountAmountCents: number;
    items: { label: string; kind: string; amount: number }[];
    lines: { type: string; amount: number; description: string; currency: string }[];
  };
}

const subscriptionOf = async (client: GqlClient) =>
  (await client.gqlOk<{ viewer: { subscription: Sub } }>(`{ viewer { subscription { ${SUBSCRIPTION} } } }`)).viewer
    .subscription;

const endpoint = async (client: GqlClient, label: string) =>
  (
    await client.gqlOk<{ createEndpoint: { id: string } }>(
      "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
      { input: { chain: "ethereum", network: "ethereum-sepolia", label } },
    )
  ).createEndpoint.id;

const statusOf = async (client: GqlClient, id: string) =>
  (await client.gqlOk<{ endpoint: { status: string } }>("query($id: ID!) { endpoint(id: $id) { status } }", { id }))
    .endpoint.status;

interface Invoice {
  id: string;
  number: string;
  status: string;
  periodStart: string;
  periodEnd: string;
  totalCents: number;
  subtotalCents: number;
  discountCents: number;
  taxCents: number;
  pdfUrl: string;
  lines: { type: string; amount: number; description: string }[];
}

const invoicesOf = async (client: GqlClient) =>
  (
    await client.gqlOk<{ invoices: { edges: { node: Invoice }[] } }>(
      "{ invoices(first: 50) { edges { node { id number status periodStart periodEnd totalCents subtotalCents discountCents taxCents pdfUrl lines { type amount description } } } } }",
    )
  ).invoices.edges
    .map((e) => e.node)
    .sort((a, b) => a.number.localeCompare(b.number));

/** Moves the account's period and licence back in time, as if the clock had jumped forward by `months`. */
async function travel(user: TestUser, months: number) {
  const shift = `interval '${months} months'`;
  await db.$client.query(
    `update subscriptions set current_period_start = current_period_start - ${shift}, current_period_end = current_period_end - ${shift} where account_id = $1`,
    [user.viewer.id],
  );
  await db.$client.query(
    `update billing_states set licensed_start = licensed_start - ${shift}, licensed_end = licensed_end - ${shift} where account_id = $1`,
    [user.viewer.id],
  );
}

const subscribe = (client: GqlClient, input: Record<string, unknown>) =>
  client.gql(
    "mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { subscription { id } } }",
    {
      input,
    },
  );

const sum = (lines: { amount: number }[]) => lines.reduce((s, l) => s + l.amount, 0);

describe("plans", () => {
  it("lists the catalogue's plans with monthly and yearly prices in cents, overage, trial and features", async () => {
    const user = await signUp(ctx.app);
    const { plans } = await user.client.gqlOk<{
      plans: {
        id: string;
        price: number;
        yearlyPrice: number;
        overagePricePerMillionCredits: number | null;
        trialDays: number;
        features: string[];
      }[];
    }>("{ plans { id price yearlyPrice overagePricePerMillionCredits trialDays features } }");
    const build = plans.find((p) => p.id === "b6_build");
    expect(build).toMatchObject({ price: 4900, yearlyPrice: 49000, overagePricePerMillionCredits: 62, trialDays: 14 });
    expect(build?.features.length).toBeGreaterThan(0);
    expect(plans.find((p) => p.id === "b6_free")?.overagePricePerMillionCredits).toBeNull();
  });
});

describe("subscriptions", () => {
  it("subscribing closes the Free period into an invoice, starts the trial and the plan's limits at once", async () => {
    const user = await signUp(ctx.app);
    expect((await subscribe(user.client, { plan: "b6_build" })).errors).toBeUndefined();
    const sub = await subscriptionOf(user.client);
    expect(sub).toMatchObject({ plan: { id: "b6_build" }, endpointLimit: 10, requestsPerSecond: 50 });
    const { viewer } = await user.client.gqlOk<{ viewer: { isFreeTrial: boolean; freeTrialDaysRemaining: number } }>(
      "{ viewer { isFreeTrial freeTrialDaysRemaining } }",
    );
    expect(viewer).toEqual({ isFreeTrial: true, freeTrialDaysRemaining: 14 });
    const preview = sub.upcomingInvoicePreview;
    // The trial covers 14 days of the first month: the rest of it is charged, and taxed.
    expect(preview.lines.map((l) => l.type)).toEqual(["BASE", "BASE", "TAX"]);
    expect(preview.lines[1]).toMatchObject({ description: "Free trial", currency: "usd" });
    expect(preview.amountDueCents).toBe(sum(preview.lines));
    const [free] = await invoicesOf(user.client);
    expect(free).toMatchObject({ status: "paid", totalCents: 0 });
    // A second subscription is a change of plan, not a new one.
    expect((await subscribe(user.client, { plan: "b6_scale" })).errors?.[0]?.extensions?.code).toBe("CONFLICT");
  });

  it("an upgrade is in force at once and prorated: a credit for the old plan's unused time, a charge for the new one's", async () => {
    const user = await signUp(ctx.app);
    await subscribe(user.client, { plan: "b6_accelerate" });
    // Half the licence gone: the proration is half the difference, within a cent per line.
    await db.$client.query(
      "update billing_states set licensed_start = now() - interval '15 days', licensed_end = now() + interval '15 days' where account_id = $1",
      [user.viewer.id],
    );
    const { upgradeSubscription } = await user.client.gqlOk<{
      upgradeSubscription: { plan: { id: string }; endpointLimit: number; requestsPerSecond: number };
    }>('mutation { upgradeSubscription(input: { plan: "b6_scale" }) { plan { id } endpointLimit requestsPerSecond } }');
    expect(upgradeSubscription).toEqual({ plan: { id: "b6_scale" }, endpointLimit: 30, requestsPerSecond: 250 });
    const preview = (await subscriptionOf(user.client)).upcomingInvoicePreview;
    const prorations = preview.lines.filter((l) => l.type === "PRORATION");
    expect(prorations.map((l) => l.description)).toEqual([
      expect.stringMatching(/^Unused time on Accelerate until /),
      expect.stringMatching(/^Remaining time on Scale until /),
    ]);
    expect(Math.abs(prorations[0].amount + 12450)).toBeLessThanOrEqual(2);
    expect(Math.abs(prorations[1].amount - 24950)).toBeLessThanOrEqual(2);
    expect(preview.subtotalCents).toBe(sum(preview.lines.filter((l) => l.type !== "TAX" && l.type !== "DISCOUNT")));
    expect(preview.taxCents).toBe(Math.round(preview.subtotalCents / 10));
    expect(preview.amountDueCents).toBe(sum(preview.lines));
    // Lower is not an upgrade, and nothing changed.
    const lower = await user.client.gql('mutation { upgradeSubscription(input: { plan: "b6_build" }) { id } }');
    expect(lower.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/plan" }],
    });
    expect((await subscriptionOf(user.client)).plan.id).toBe("b6_scale");
  });

  it("refuses an unknown plan or coupon naming the field, and writes nothing", async () => {
    const user = await signUp(ctx.app);
    const unknownPlan = await subscribe(user.client, { plan: "b6_platinum" });
    expect(unknownPlan.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/plan" }],
    });
    const unknownCoupon = await subscribe(user.client, { plan: "b6_build", couponCode: "NOPE" });
    expect(unknownCoupon.errors?.[0]?.extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/couponCode", message: "No coupon has this code." }],
    });
    const ended = await subscribe(user.client, { plan: "b6_build", couponCode: "SPRING2025" });
    expect(ended.errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/couponCode", message: "The coupon SPRING2025 is no longer valid." },
    ]);
    expect((await subscriptionOf(user.client)).plan.id).toBe("b6_free");
    expect(await invoicesOf(user.client)).toEqual([]);
  });

  it("creating an endpoint beyond the plan is refused naming the limit", async () => {
    const user = await signUp(ctx.app);
    await endpoint(user.client, "one");
    await endpoint(user.client, "two");
    const third = await user.client.gql(
      "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
      { input: { chain: "ethereum", network: "ethereum-sepolia" } },
    );
    expect(third.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    expect(third.errors?.[0]?.message).toBe("Your Free plan allows 2 endpoints; archive one or upgrade to add more.");
  });

  it("a downgrade keeping too many endpoints is refused naming the field; at the period's end the endpoints not kept are paused", async () => {
    const user = await signUp(ctx.app);
    await subscribe(user.client, { plan: "b6_build" });
    const ids = [await endpoint(user.client, "a"), await endpoint(user.client, "b"), await endpoint(user.client, "c")];
    const downgrade = (endpointIds?: string[]) =>
      user.client.gql(
        'mutation($ids: [ID!]) { downgradeSubscription(plan: "b6_free", endpointIds: $ids) { isDowngradeScheduled } }',
        {
          ids: endpointIds,
        },
      );
    expect((await downgrade()).errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/endpointIds", message: "You have 3 endpoints and the Free plan allows 2: choose the ones to keep." },
    ]);
    expect((await downgrade(ids)).errors?.[0]?.extensions?.fields).toEqual([
      { pointer: "/endpointIds", message: "Keep at most 2: the Free plan allows 2 endpoints." },
    ]);
    expect((await subscriptionOf(user.client)).isDowngradeScheduled).toBe(false);

    expect((await downgrade([ids[2]])).errors).toBeUndefined();
    const scheduled = await subscriptionOf(user.client);
    expect(scheduled).toMatchObject({
      isDowngradeScheduled: true,
      downgradeEndpointIds: [ids[2]],
      plan: { id: "b6_build" },
    });
    // Cancelled and scheduled again: the schedule is one state.
    await user.client.gqlOk("mutation { cancelDowngradeSubscription { id } }");
    expect((await subscriptionOf(user.client)).isDowngradeScheduled).toBe(false);
    expect((await downgrade([ids[2]])).errors).toBeUndefined();

    await travel(user, 1);
    expect(await closeEndedPeriodsOfAll(deps)).toBeGreaterThanOrEqual(1);
    const after = await subscriptionOf(user.client);
    expect(after).toMatchObject({ plan: { id: "b6_free" }, endpointLimit: 2, isDowngradeScheduled: false });
    // The chosen endpoint and the oldest other one serve; the third is paused.
    expect([
      await statusOf(user.client, ids[0]),
      await statusOf(user.client, ids[1]),
      await statusOf(user.client, ids[2]),
    ]).toEqual(["ACTIVE", "PAUSED", "ACTIVE"]);
    // Resuming it would serve more than the plan allows.
    const resume = await user.client.gql("mutation($id: ID!) { toggleEndpointPaused(id: $id) { status } }", {
      id: ids[1],
    });
    expect(resume.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    const invoices = await invoicesOf(user.client);
    expect(invoices.at(-1)?.lines[0]).toMatchObject({ type: "BASE", description: "Build plan" });
  });

  it("a cancelation keeps the survey's answer, can be reverted, and at the period's end moves the account to Free", async () => {
    const user = await signUp(ctx.app);
    const cancel = () =>
      user.client.gql(
        'mutation { requestCancelation(input: { reasons: ["TOO_EXPENSIVE", "OTHER"], comment: "trying another" }) { cancelationRequestedAt endDate } }',
      );
    expect((await cancel()).errors?.[0]?.extensions?.code).toBe("CONFLICT");
    await subscribe(user.client, { plan: "b6_build" });
    const noReason = await user.client.gql("mutation { requestCancelation(input: { reasons: [] }) { id } }");
    expect(noReason.errors?.[0]?.extensions?.fields?.[0]?.pointer).toBe("/reasons");
    expect((await cancel()).errors).toBeUndefined();
    expect((await subscriptionOf(user.client)).cancelationRequestedAt).not.toBeNull();
    await user.client.gqlOk("mutation { revertCancelSubscription { id } }");
    expect((await subscriptionOf(user.client)).cancelationRequestedAt).toBeNull();
    expect((await user.client.gql("mutation { revertCancelSubscription { id } }")).errors?.[0]?.extensions?.code).toBe(
      "CONFLICT",
    );
    await cancel();
    const [{ cancelation_survey: survey }] = (
      await db.$client.query("select cancelation_survey from billing_states where account_id = $1", [user.viewer.id])
    ).rows;
    expect(survey).toEqual({ reasons: ["TOO_EXPENSIVE", "OTHER"], comment: "trying another" });
    await travel(user, 1);
    await closeEndedPeriodsOfAll(deps);
    const after = await subscriptionOf(user.client);
    expect(after.plan.id).toBe("b6_free");
    expect(after.canceledAt).not.toBeNull();
    expect(after.cancelationRequestedAt).toBeNull();
  });

  it("a billing-version migration is scheduled for the period's end or performed now, once", async () => {
    const user = await signUp(ctx.app);
    const migrate = () =>
      user.client.gql('mutation { migrateBillingVersion(plan: "b6_build") { plan { id } pendingMigration } }');
    expect((await migrate()).errors?.[0]?.extensions?.code).toBe("CONFLICT");
    await db.$client.query("update accounts set billing_version = 5 where id = $1", [user.viewer.id]);
    const scheduled = await user.client.gqlOk<{ scheduleBillingMigration: { pendingMigration: boolean } }>(
      'mutation { scheduleBillingMigration(plan: "b6_build") { pendingMigration } }',
    );
    expect(scheduled.scheduleBillingMigration.pendingMigration).toBe(true);
    const performed = await migrate();
    expect(performed.data).toEqual({ migrateBillingVersion: { plan: { id: "b6_build" }, pendingMigration: false } });
    const { viewer } = await user.client.gqlOk<{ viewer: { billingVersion: number } }>("{ viewer { billingVersion } }");
    expect(viewer.billingVersion).toBe(6);
  });
});

describe("periods and invoices", () => {
  it("a coupon applies for its duration only, every invoice's total is the sum of its lines, each period is closed once", async () => {
    const user = await signUp(ctx.app);
    expect((await subscribe(user.client, { plan: "b6_accelerate", couponCode: "welcome20" })).errors).toBeUndefined();
    expect((await subscriptionOf(user.client)).upcomingInvoicePreview.totalDiscountAmountCents).toBe(4980);
    // The clock jumps four months: four periods end, each closes into its own invoice.
    await travel(user, 4);
    const [first, second] = await Promise.all([closeEndedPeriodsOfAll(deps), closeEndedPeriodsOfAll(deps)]);
    expect(first + second).toBeGreaterThanOrEqual(4);
    const invoices = (await invoicesOf(user.client)).slice(1);
    expect(invoices.length).toBe(4);
    expect(new Set(invoices.map((i) => i.periodStart)).size).toBe(4);
    for (let i = 1; i < invoices.length; i++) expect(invoices[i].periodStart).toBe(invoices[i - 1].periodEnd);
    expect(invoices.map((i) => i.discountCents)).toEqual([4980, 4980, 4980, 0]);
    for (const invoice of invoices) {
      expect(invoice.totalCents).toBe(sum(invoice.lines));
      expect(invoice.totalCents).toBe(invoice.subtotalCents - invoice.discountCents + invoice.taxCents);
      expect(invoice.status).toBe("open");
    }
    expect(invoices[3].lines.map((l) => [l.type, l.amount])).toEqual([
      ["BASE", 24900],
      ["TAX", 2490],
    ]);
    expect((await subscriptionOf(user.client)).upcomingInvoicePreview.totalDiscountAmountCents).toBe(0);
    // The clock tick again finds nothing to close for this account.
    expect(await closeEndedPeriodsOfAll(deps)).toBe(0);
  });

  it("an installed add-on is a line of the period's invoice, prorated from its install, in the preview and the closed invoice", async () => {
    const user = await signUp(ctx.app);
    expect((await subscribe(user.client, { plan: "b6_build" })).errors).toBeUndefined();
    const endpointId = await endpoint(user.client, "with tokens");
    await user.client.gqlOk("mutation($input: InstallAddonInput!) { installAddon(input: $input) { id } }", {
      input: { endpointId, planId: "token-api-growth" },
    });
    const addonLine = (lines: { description: string; amount: number }[]) =>
      lines.filter((l) => l.description.startsWith("Token API, Growth plan on with tokens"));
    const preview = (await subscriptionOf(user.client)).upcomingInvoicePreview;
    // Installed a moment after the period began: $29.00 less that moment's share, which rounds to nothing.
    expect(addonLine(preview.lines).map((l) => l.amount)).toEqual([2900]);
    expect(preview.amountDueCents).toBe(sum(preview.lines));
    const { rows } = await db.$client.query<{ end: Date }>(
      "select current_period_end as end from subscriptions where account_id = $1",
      [user.viewer.id],
    );
    expect(await closeEndedPeriod(deps, user.viewer.id, new Date(rows[0].end.getTime() + 1000))).toBe(true);
    const invoice = (await invoicesOf(user.client)).at(-1);
    expect(invoice && addonLine(invoice.lines).map((l) => l.amount)).toEqual([2900]);
    expect(invoice?.lines.find((l) => l.description.startsWith("Token API"))?.type).toBe("ADDON");
    expect(invoice?.totalCents).toBe(sum(invoice?.lines ?? []));
    expect(invoice?.totalCents).toBe(
      (invoice?.subtotalCents ?? 0) - (invoice?.discountCents ?? 0) + (invoice?.taxCents ?? 0),
    );
  });

  it("forecasts the period's bill: credits so far and projected against the allowance, billed as the preview bills", async () => {
    const user = await signUp(ctx.app);
    expect((await subscribe(user.client, { plan: "b6_build" })).errors).toBeUndefined();
    const { viewer } = await user.client.gqlOk<{
      viewer: {
        subscription: {
          responsesPerMonth: number;
          upcomingInvoicePreview: { amountDueCents: number };
          forecast: {
            periodStart: string;
            periodEnd: string;
            stepSeconds: number;
            creditsSoFar: number;
            projectedCredits: number;
            allowance: number;
            projectedTotalCents: number;
            points: { at: string; series: string; credits: number }[];
          };
        };
      };
    }>(
      `{ viewer { subscription { responsesPerMonth upcomingInvoicePreview { amountDueCents }
        forecast { periodStart periodEnd stepSeconds creditsSoFar projectedCredits allowance projectedTotalCents points { at series credits } } } } }`,
    );
    const { forecast, upcomingInvoicePreview, responsesPerMonth } = viewer.subscription;
    expect(forecast).toMatchObject({
      stepSeconds: 86_400,
      creditsSoFar: 0,
      projectedCredits: 0,
      allowance: responsesPerMonth,
    });
    // Nothing used yet: the forecast bill is the preview's.
    expect(forecast.projectedTotalCents).toBe(upcomingInvoicePreview.amountDueCents);
    const allowance = forecast.points.filter((p) => p.series === "ALLOWANCE");
    expect(allowance.length).toBeGreaterThanOrEqual(27);
    for (const point of forecast.points) {
      expect(Date.parse(point.at) % 86_400_000).toBe(0);
      expect(point.at > forecast.periodStart && point.at < forecast.periodEnd).toBe(true);
    }
  });

  it("bills credits above the allowance where the plan bills overage, and keeps the endpoints serving", async () => {
    const user = await signUp(ctx.app);
    await subscribe(user.client, { plan: "b6_build" });
    const id = await endpoint(user.client, "busy");
    await db.$client.query(
      "insert into usage_minutes (account_id, endpoint_id, method, minute, requests, credits) values ($1, $2, 'eth_call', date_trunc('minute', now()), 90000000, 90000000)",
      [user.viewer.id, id],
    );
    const { upcomingInvoicePreview: preview } = await subscriptionOf(user.client);
    expect(preview.overageAmountDueCents).toBe(620);
    expect(preview.items.find((i) => i.kind === "OVERAGE")).toEqual({
      label: "10,000,000 credits above the plan's allowance",
      kind: "OVERAGE",
      amount: 620,
    });
    const { enforceMonthlyLimit } = await import("../../server/domains/usage/service.ts");
    expect((await enforceMonthlyLimit(db, ctx.app.services.events, user.viewer.id)).reached).toBe(false);
    expect(await statusOf(user.client, id)).toBe("ACTIVE");
  });

  it("serves each invoice as a PDF to a signed-in member of its account, its total the sum of its lines; to no one else", async () => {
    const user = await signUp(ctx.app, { companyName: "Acme Nodes" });
    await subscribe(user.client, { plan: "b6_scale", couponCode: "TENOFF" });
    await travel(user, 1);
    await closeEndedPeriodsOfAll(deps);
    const invoice = (await invoicesOf(user.client)).at(-1) as Invoice;
    expect(invoice.lines.map((l) => l.type)).toEqual(["BASE", "DISCOUNT", "TAX"]);
    expect(invoice.pdfUrl).toBe(`${ctx.app.url}/billing/invoices/${invoice.id}/pdf`);
    const pdfPath = new URL(invoice.pdfUrl).pathname;
    const response = await user.client.request(pdfPath);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    const pdf = Buffer.from(await response.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const text = pdfText(pdf);
    expect(text).toContain(`Invoice ${invoice.number}`);
    expect(text).toContain("Acme Nodes");
    for (const line of invoice.lines) expect(text).toContain(line.description);
    const dollars = (c: number) =>
      `${c < 0 ? "-" : ""}$${Math.floor(Math.abs(c) / 100).toLocaleString("en-US")}.${String(Math.abs(c) % 100).padStart(2, "0")}`;
    const lineAmounts = invoice.lines.map((l) => dollars(l.amount));
    for (const amount of lineAmounts) expect(text).toContain(amount);
    expect(text).toContain(`Total (USD)${dollars(sum(invoice.lines))}`);

    const stranger = await signUp(ctx.app);
    expect((await stranger.client.request(pdfPath)).status).toBe(404);
    expect((await ctx.app.client().request(pdfPath)).status).toBe(401);
    const theirs = await stranger.client.gql("query($id: ID!) { invoice(id: $id) { id } }", { id: invoice.id });
    expect(theirs.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});

/**
 * The text a PDF shows, in drawing order: each content stream inflated, and the strings of its text
 * operators (pdfkit writes the standard fonts' text as hex strings, `<…> Tj` or `[<…> n <…>] TJ`) decoded.
 */
function pdfText(pdf: Buffer): string {
  const raw = pdf.toString("latin1");
  let text = "";
  for (const match of raw.matchAll(/stream\r?\n/g)) {
    const start = (match.index ?? 0) + match[0].length;
    const end = raw.indexOf("endstream", start);
    let content: string;
    try {
      content = inflateSync(pdf.subarray(start, end)).toString("latin1");
    } catch {
      continue;
    }
    for (const op of content.matchAll(/(\[(?:[^\]]*)\]|<[0-9a-fA-F]*>)\s*T[Jj]/g)) {
      for (const hex of op[1].matchAll(/<([0-9a-fA-F]*)>/g)) text += Buffer.from(hex[1], "hex").toString("latin1");
    }
  }
  return text;
}
