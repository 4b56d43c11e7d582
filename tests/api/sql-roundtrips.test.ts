// A list page costs a fixed number of SQL round trips whatever its size. Every list in screens/ (a list
// view, or the options of a field or filter: whatever names a query and its rows) is run as the console
// runs it (its operation, its variables, its page size) for an account with one item and for one with
// several, and the round trips the service makes for each request are counted: the two counts must be
// equal. A per-row lookup (N+1) makes the second larger.
import { eq, inArray, sql } from "drizzle-orm";
import { exportSPKI, generateKeyPair } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember } from "../../server/domains/account/service.ts";
import { subscriptions } from "../../server/domains/account/tables.ts";
import { paymentCharges, taxIds } from "../../server/domains/billing/payments/tables.ts";
import { closeEndedPeriodsOfAll } from "../../server/domains/billing/service.ts";
import { invoices } from "../../server/domains/billing/tables.ts";
import { endpoints as endpointRows } from "../../server/domains/endpoints/tables.ts";
import { errorLogs } from "../../server/domains/errorlogs/tables.ts";
import { inspectedRequests } from "../../server/domains/inspector/tables.ts";
import { kvUploads } from "../../server/domains/kv/tables.ts";
import { streamDeliveries, streamLogs, streams } from "../../server/domains/streams/tables.ts";
import { endpointMetricMinutes, usageMinutes } from "../../server/domains/usage/tables.ts";
import { loadApiSchema } from "../../server/graphql/schema.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { mailOutbox } from "../../server/platform/mail.ts";
import { loadRegistry } from "../../server/registry/registry.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";
import { untaxedBilling } from "../support/billing.ts";

/** Items of each kind the larger account has (the dashboard's lists show five). */
const MANY = 5;

/** Lists (query and rows) whose length does not follow the account's items, and why. */
const FIXED_LENGTH: Record<string, string> = {
  "RateLimits rateLimits.defaults": "one row per bucket, from the plan",
  "EndpointRpcMethods endpointRpcMethods": "the chain's methods, n of them disabled by request filters",
  "Chains chains": "the catalogue",
  "Chains chains[].networks[]": "the catalogue",
  "StreamNetworks chains[].networks[]": "the catalogue",
  "StreamDatasets streamPermissions.networkDatasets": "the catalogue, as the plan allows",
  "StreamDestinations streamPermissions.destinations": "the catalogue, as the plan allows",
  "FunctionTemplates functionTemplates": "the quick functions' templates",
  "FunctionPermissions functionPermissions.memorySizes": "the memory sizes the plan allows",
  "Addons addons": "the add-on catalogue",
  "AddonCategories addonCategories": "the add-on catalogue",
  "Bundles bundles": "the add-on catalogue",
  "Addon addon.plans": "the add-on catalogue",
  "Addon addon.rpcMethods": "the add-on catalogue",
  "BillingPlans plans[]": "the plan catalogue",
  "BillingOverview viewer.subscription.upcomingInvoicePreview.lines": "one line per kind of charge of the period",
  "TestPaymentNumbers testPaymentNumbers": "the built-in provider's documented test numbers",
  "TaxIdTypes taxIdTypes[]": "the tax id rules' catalogue",
  "AccountBanners accountBanners.trialEnding": "the one free trial, when it ends soon",
};

interface ListView {
  screen: string;
  query: string;
  text: string;
  variables: Record<string, unknown>;
  /** Where the rows are in the answer, e.g. `endpoints.edges[].node`. */
  rows: string;
}

/** Every list of every screen: each object in a manifest naming a query and its rows. */
function listViews(rootDir: string): ListView[] {
  const registry = loadRegistry(rootDir, loadApiSchema());
  const views = new Map<string, ListView>();
  const visit = (screen: string, value: unknown) => {
    if (Array.isArray(value)) {
      for (const item of value) visit(screen, item);
      return;
    }
    if (!value || typeof value !== "object") return;
    const node = value as Record<string, unknown>;
    if (typeof node.query === "string" && typeof node.rows === "string") {
      const operation = registry.operations.get(node.query);
      if (!operation) throw new Error(`${screen}: no operation ${node.query}`);
      const variables = { ...((node.variables as Record<string, unknown> | undefined) ?? {}) };
      const paging = node.paging as { first: string; pageSize: number } | undefined;
      if (paging) variables[paging.first] = paging.pageSize;
      const view = { screen, query: node.query, text: operation.text, variables, rows: node.rows };
      views.set(`${view.query} ${view.rows} ${JSON.stringify(variables)}`, view);
    }
    for (const child of Object.values(node)) visit(screen, child);
  };
  for (const { manifest } of registry.screens) visit(manifest.id, manifest);
  return [...views.values()];
}

/** The rows at a path like `a.b[].c`. */
function rowsAt(data: unknown, path: string): unknown[] {
  let values: unknown[] = [data];
  for (const part of path.split(".")) {
    const many = part.endsWith("[]");
    const key = many ? part.slice(0, -2) : part;
    values = values.flatMap((value) => {
      const next = (value as Record<string, unknown> | null)?.[key];
      return many ? ((next as unknown[] | null) ?? []) : [next];
    });
  }
  return values.length === 1 && Array.isArray(values[0]) ? values[0] : values;
}

/** Route parameters of an account's screens: the first of each kind of item it has. */
type RouteParams = Record<
  | "slug"
  | "inspectionUrlId"
  | "endpointId"
  | "functionId"
  | "streamId"
  | "webhookId"
  | "listKey"
  | "addressBookKey"
  | "valueKey",
  string
>;

function resolveVariables(templates: Record<string, unknown>, route: RouteParams): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(templates)) {
    if (typeof value === "string" && value.startsWith("$route.")) {
      const param = value.slice("$route.".length) as keyof RouteParams;
      if (!route[param]) throw new Error(`no route parameter ${param}`);
      variables[name] = route[param];
    } else if (typeof value === "string" && value.startsWith("$query.")) {
      // An empty query string: the screen sends nothing.
    } else {
      variables[name] = value;
    }
  }
  return variables;
}

/** An account with `n` items of every kind a list shows; returns its client and route parameters. */
async function accountWith(
  app: TestApp,
  db: Db,
  n: number,
): Promise<{ accountId: string; client: GqlClient; route: RouteParams }> {
  const owner = await signUp(app);
  const { client } = owner;
  const accountId = owner.viewer.id;
  // The Build plan: room for 5 of each kind of key-value key (the Free plan allows 10 keys in all).
  await db
    .update(subscriptions)
    .set({ endpointLimit: 100, planId: "b6_build" })
    .where(eq(subscriptions.accountId, accountId));
  const range = Array.from({ length: n }, (_, i) => i);

  const endpoints: { id: string; exId: string }[] = [];
  for (const i of range) {
    const { createEndpoint } = await client.gqlOk<{ createEndpoint: { id: string; exId: string } }>(
      "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id exId } }",
      { input: { chain: "ethereum", network: "ethereum-sepolia", label: `endpoint ${i}` } },
    );
    await client.gqlOk("mutation($e: ID!, $l: String!) { addEndpointTag(endpointId: $e, label: $l) { id } }", {
      e: createEndpoint.id,
      l: `tag ${i}`,
    });
    endpoints.push(createEndpoint);
  }
  const endpoint = endpoints[0];
  const now = Date.now();

  // The team: the owner and n - 1 more.
  for (const i of range.slice(1)) {
    await addMember(db, accountId, { email: `m${i}-${owner.email}`, password: "member-password", role: "VIEWER" });
  }
  // Security: a new endpoint has one token; n of each kind of entry.
  for (const i of range) {
    if (i > 0) await client.gqlOk("mutation($id: ID!) { createAuthToken(id: $id) { id } }", { id: endpoint.id });
    const e = endpoint.id;
    await client.gqlOk("mutation($e: ID!, $v: String!) { createReferrer(endpointId: $e, referrer: $v) { id } }", {
      e,
      v: `https://site${i}.example.com`,
    });
    await client.gqlOk("mutation($e: ID!, $v: String!) { createIp(endpointId: $e, ip: $v) { id } }", {
      e,
      v: `10.0.0.${i + 1}`,
    });
    await client.gqlOk("mutation($e: ID!, $v: String!) { createDomainMask(endpointId: $e, host: $v) { id } }", {
      e,
      v: `rpc${i}-${endpoint.exId}.example.com`,
    });
    await client.gqlOk("mutation($e: ID!, $v: String!) { createRequestFilter(endpointId: $e, method: $v) { id } }", {
      e,
      v: ["eth_call", "eth_getBalance", "eth_getLogs", "eth_blockNumber", "eth_chainId"][i],
    });
    const { publicKey } = await generateKeyPair("RS256", { extractable: true });
    await client.gqlOk(
      "mutation($e: ID!, $k: String!, $p: String!) { createJwt(id: $e, name: $k, kid: $k, publicKey: $p) { id } }",
      {
        e,
        k: `key-${i}`,
        p: await exportSPKI(publicKey),
      },
    );
    // One override of each kind per bucket, and there are three buckets.
    const bucket = ["RPS", "RPM", "RPD"][i];
    if (bucket) {
      await client.gqlOk(
        `mutation($e: ID!, $b: RateLimitBucket!) { createRateLimitOverride(endpointId: $e, bucket: $b, rateLimit: 1000, reason: "batch") { endpointId } }`,
        { e, b: bucket },
      );
      await client.gqlOk(
        `mutation($e: ID!, $b: RateLimitBucket!) { createRateLimitKeyOverride(endpointId: $e, bucket: $b, reason: "per client") { endpointId } }`,
        { e, b: bucket },
      );
    }
    await client.gqlOk(
      `mutation($e: ID!, $m: [String!]!) { createRateLimiter(endpointId: $e, interval: SECOND, rate: 10, methods: $m, reason: "load", limitByIP: false) { id } }`,
      { e, m: [`eth_method${i}`] },
    );
  }
  // Functions, and n runs (each writing a log line) and n versions of the first.
  const functionIds: string[] = [];
  for (const i of range) {
    const { createFunction } = await client.gqlOk<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      { input: { name: `function ${i}`, code: 'function main(params) { console.log("run"); return params; }' } },
    );
    functionIds.push(createFunction.id);
  }
  for (const i of range) {
    await client.gqlOk("mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }", {
      input: { id: functionIds[0], params: { i } },
    });
    if (i > 0)
      await client.gqlOk("mutation($input: UpdateFunctionInput!) { updateFunction(input: $input) { id } }", {
        input: { id: functionIds[0], code: `function main(params) { console.log("run ${i}"); return params; }` },
      });
  }
  // Streams and webhooks (rows as the API stores them), n log lines and deliveries on the first of each.
  const streamRow = (product: string, i: number) => ({
    accountId,
    product,
    name: `${product.toLowerCase()} ${i}`,
    network: "ethereum-sepolia",
    dataset: product === "WEBHOOK" ? "BLOCK_WITH_RECEIPTS" : "BLOCK",
    destination: "WEBHOOK",
    destinationAttributes: { url: `https://hooks.example.com/${i}` },
    startRange: 1,
    // Each stopped by a failure, so the dashboard's banners list n of each.
    statusReason: `delivery failed ${i}`,
    failedAt: new Date(now - i * 1000),
  });
  const streamIds = await db
    .insert(streams)
    .values(range.map((i) => streamRow("STREAM", i)))
    .returning({ id: streams.id });
  const webhookIds = await db
    .insert(streams)
    .values(range.map((i) => streamRow("WEBHOOK", i)))
    .returning({ id: streams.id });
  for (const streamId of [streamIds[0].id, webhookIds[0].id]) {
    await db
      .insert(streamLogs)
      .values(range.map((i) => ({ accountId, streamId, level: "INFO", message: `line ${i}` })));
    await db.insert(streamDeliveries).values(
      range.map((i) => ({
        accountId,
        streamId,
        startBlock: i,
        endBlock: i,
        attempt: 1,
        outcome: "DELIVERED",
        httpStatus: 200,
        answer: "HTTP 200",
        latencyMs: 1,
        bytes: 10,
        preview: "[]",
      })),
    );
  }
  // Error logs of the first endpoint, usage of n methods over n endpoints (and all n on the first, for
  // its metrics), n refusal reasons on the first endpoint, n notifications.
  await db.insert(errorLogs).values(
    range.map((i) => ({
      accountId,
      endpointId: endpoint.id,
      requestId: `request-${i}`,
      at: new Date(now - i * 1000),
      method: "eth_call",
      httpMethod: "POST",
      status: 429,
      errorKind: "RATE_LIMITED",
      url: `/rpc/${endpoint.exId}`,
      network: "ethereum-sepolia",
      transport: "http",
    })),
  );
  const minute = new Date(Math.floor(now / 60_000) * 60_000);
  await db.insert(usageMinutes).values(
    range.map((i) => ({
      accountId,
      endpointId: endpoints[i].id,
      method: `eth_method${i}`,
      minute,
      requests: 10 + i,
      credits: 20 + i,
    })),
  );
  if (n > 1)
    await db
      .insert(usageMinutes)
      .values(
        range
          .slice(1)
          .map((i) => ({ accountId, endpointId: endpoint.id, method: `eth_method${i}`, minute, requests: 1 })),
      );
  await db.insert(endpointMetricMinutes).values({
    accountId,
    endpointId: endpoint.id,
    minute,
    requests: n,
    statuses: { "403": n },
    refusals: Object.fromEntries(range.map((i) => [`REASON_${i}`, 1])),
    latencySketch: { "0": n },
  });
  await db
    .insert(mailOutbox)
    .values(range.map((i) => ({ accountId, to: `ops${i}@example.com`, subject: `notice ${i}`, body: "text" })));
  // Key-value store: n lists, address books and values; the first list and book hold n items.
  for (const i of range) {
    const items = i === 0 ? range.map((j) => `0x${j.toString(16).padStart(40, "0")}`) : [];
    await client.gqlOk("mutation($input: CreateKvItemsInput!) { createList(input: $input) { success } }", {
      input: { key: `list-${i}`, items },
    });
    await client.gqlOk("mutation($input: CreateKvItemsInput!) { createAddressBook(input: $input) { success } }", {
      input: { key: `book-${i}`, items },
    });
    await client.gqlOk("mutation($input: KvValueInput!) { createValue(input: $input) { key } }", {
      input: { key: `value-${i}`, value: `${i}` },
    });
  }
  // Open uploads (rows only, no parts received).
  await db.insert(kvUploads).values(
    range.map((i) => ({
      accountId,
      kind: "LIST",
      key: `upload-${i}`,
      bucket: "local",
      expiresAt: new Date(Date.now() + 3600_000),
    })),
  );

  // n inspection URLs, the first with n requests received.
  const inspectionUrlIds: string[] = [];
  for (const i of range) {
    const { createInspectionUrl } = await client.gqlOk<{ createInspectionUrl: { id: string } }>(
      "mutation($input: CreateInspectionUrlInput!) { createInspectionUrl(input: $input) { id } }",
      { input: { name: `inspector ${i}` } },
    );
    inspectionUrlIds.push(createInspectionUrl.id);
  }
  await db.insert(inspectedRequests).values(
    range.map((i) => ({
      accountId,
      inspectionUrlId: inspectionUrlIds[0],
      receivedAt: new Date(now - i * 1000),
      method: "POST",
      headers: [["content-type", "application/json"]] as [string, string][],
      body: `{"i":${i}}`,
      bodyTruncated: false,
      size: 7,
      signature: "UNSIGNED",
    })),
  );

  // Add-ons installed on the route's endpoint, one each (an endpoint holds one install of an add-on).
  for (const planId of ["trace-debug-starter", "token-api-free", "nft-api-free"].slice(0, n))
    await client.gqlOk("mutation($input: InstallAddonInput!) { installAddon(input: $input) { id } }", {
      input: { endpointId: endpoint.id, planId },
    });
  for (const i of range)
    await client.gqlOk("mutation($input: CreateAccessTokenInput!) { createAccessToken(input: $input) { key } }", {
      input: { name: `key ${i}`, role: "VIEWER", applications: ["CONSOLE_REST"] },
    });
  // n invoices: each ends the current period now and the billing clock's close makes its invoice; then the
  // period the usage above was seeded in is put back.
  const [period] = await db
    .select({ start: subscriptions.currentPeriodStart, end: subscriptions.currentPeriodEnd })
    .from(subscriptions)
    .where(eq(subscriptions.accountId, accountId));
  for (const _ of range) {
    await db.update(subscriptions).set({ currentPeriodEnd: new Date() }).where(eq(subscriptions.accountId, accountId));
    await closeEndedPeriodsOfAll(untaxedBilling(db, app.services.events));
  }
  await db
    .update(subscriptions)
    .set({ currentPeriodStart: period.start, currentPeriodEnd: period.end })
    .where(eq(subscriptions.accountId, accountId));

  // A charge of each invoice, and n tax ids (rows as the provider's charge and createTaxId write them): every
  // second charge waits for the payer's authentication, the others were declined.
  const made = await db.select({ id: invoices.id }).from(invoices).where(eq(invoices.accountId, accountId));
  await db.insert(paymentCharges).values(
    made.map((invoice, i) => ({
      accountId,
      invoiceId: invoice.id,
      idempotencyKey: `seed-${i}`,
      provider: "builtin",
      amountCents: 100 + i,
      currency: "usd",
      ...(i % 2 === 1 ? { status: "requires_action" } : { status: "failed", failureCode: "card_declined" }),
      methodLabel: "Visa ending 0341",
      cardLast4: "0341",
    })),
  );
  await db
    .insert(taxIds)
    .values(range.map((i) => ({ accountId, type: "eu_vat", value: `DE${100000000 + i}`, country: "DE" })));
  // The banners' states: the invoices left open, something due on each, while the subscription is past due,
  // the endpoints stopped at the monthly limit.
  await db
    .update(invoices)
    .set({ status: "open", amountRemainingCents: sql`greatest(${invoices.amountRemainingCents}, 100)` })
    .where(
      inArray(
        invoices.id,
        made.map((invoice) => invoice.id),
      ),
    );
  await db.update(subscriptions).set({ status: "past_due" }).where(eq(subscriptions.accountId, accountId));
  await db
    .update(endpointRows)
    .set({ status: "LIMIT_REACHED" })
    .where(
      inArray(
        endpointRows.id,
        endpoints.map((each) => each.id),
      ),
    );

  return {
    accountId,
    client,
    route: {
      slug: "trace-debug",
      inspectionUrlId: inspectionUrlIds[0],
      endpointId: endpoint.id,
      functionId: functionIds[0],
      streamId: streamIds[0].id,
      webhookId: webhookIds[0].id,
      listKey: "list-0",
      addressBookKey: "book-0",
      valueKey: "value-0",
    },
  };
}

/** Counts every query any pg client of this process sends while counting is on. */
class RoundTrips {
  private count = 0;
  private counting = false;
  private readonly original = pg.Client.prototype.query;

  install() {
    const self = this;
    const original = this.original;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (self.counting) self.count++;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
  }

  uninstall() {
    pg.Client.prototype.query = this.original;
  }

  async during(run: () => Promise<unknown>): Promise<number> {
    this.count = 0;
    this.counting = true;
    try {
      await run();
    } finally {
      this.counting = false;
    }
    return this.count;
  }
}

let app: TestApp;
let db: Db;
const roundTrips = new RoundTrips();
let one: Awaited<ReturnType<typeof accountWith>>;
let many: Awaited<ReturnType<typeof accountWith>>;
const views = listViews(new URL("../..", import.meta.url).pathname);

beforeAll(async () => {
  // Only the API in this process: no engine or proxy queries the database while requests are counted.
  app = await startTestApp({ NODEPLANE_ROLES: "api" });
  db = openDatabase(app.database.url, 2);
  one = await accountWith(app, db, 1);
  many = await accountWith(app, db, MANY);
  roundTrips.install();
}, 120_000);

afterAll(async () => {
  roundTrips.uninstall();
  await db?.$client.end();
  await app?.close();
});

describe("SQL round trips of every list view in screens/", () => {
  it("finds the lists", () => {
    expect(views.length).toBeGreaterThan(30);
  });

  for (const view of views) {
    it(`${view.screen} ${view.query} (${view.rows}): as many for ${MANY} items as for 1`, async () => {
      const run = async (account: typeof one) => {
        const variables = resolveVariables(view.variables, account.route);
        // Once before counting: the session is read and cached, statements are prepared.
        await account.client.gqlOk(view.text, variables);
        // Counted with the endpoints list cache cold: its one load is what a page costs the database.
        app.services.events.emit("endpoints.listChanged", { accountId: account.accountId });
        let data: unknown;
        const trips = await roundTrips.during(async () => {
          data = await account.client.gqlOk(view.text, variables);
        });
        return { trips, rows: rowsAt(data, view.rows).length };
      };
      const small = await run(one);
      const large = await run(many);
      if (!FIXED_LENGTH[`${view.query} ${view.rows}`]) {
        expect(large.rows, "rows for 1 and for many items").toBeGreaterThan(small.rows);
        expect(small.trips, "the list reads the database").toBeGreaterThan(0);
      }
      expect(large.trips, "SQL round trips for many items").toBe(small.trips);
    });
  }
});

describe("SQL round trips of a bill", () => {
  // Decision 1840: the subscription, billing's state, the trial, prorations, credits, add-ons and the balance.
  it("reads the upcoming invoice preview of an account with add-ons, invoices and usage in one statement", async () => {
    const preview =
      "{ viewer { subscription { upcomingInvoicePreview { amountDueCents subtotalCents taxCents lines { type amount description } } } } }";
    await many.client.gqlOk(preview);
    let lines = 0;
    const trips = await roundTrips.during(async () => {
      const data = await many.client.gqlOk<{
        viewer: { subscription: { upcomingInvoicePreview: { lines: unknown[] } } };
      }>(preview);
      lines = data.viewer.subscription.upcomingInvoicePreview.lines.length;
    });
    expect(lines).toBeGreaterThan(1);
    expect(trips).toBe(1);
  });
});
