// A crypto top-up paid for real on a local anvil credits the account's balance; the next invoice takes it
// after its discount and tax, in the one computation of a period's lines (preview, invoice and balance agree).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { closeEndedPeriodsOfAll } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signUp, startTestApp, type TestApp } from "../support/api.ts";
import { untaxedBilling } from "../support/billing.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const NETWORK = "ethereum-sepolia";

let anvil: AnvilNode;
let rpc: RpcClient;
let database: TestDatabase;
let db: Db;
let app: TestApp;
let networksDir = "";
let payer = "";

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 11155111, blockTimeSeconds: 1 });
  rpc = new RpcClient(anvil.httpUrl);
  payer = (await rpc.call<string[]>("eth_accounts"))[0];
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-top-up-"));
  writeFileSync(
    join(networksDir, "networks.json"),
    JSON.stringify({ upstreams: { [NETWORK]: { http: anvil.httpUrl, ws: anvil.wsUrl } } }),
  );
  database = await createTestDatabase();
  db = openDatabase(database.url, 2);
  // startChainNodes reads the process's environment.
  const saved = process.env.NODEPLANE_NETWORKS_CONFIG;
  process.env.NODEPLANE_NETWORKS_CONFIG = join(networksDir, "networks.json");
  try {
    app = await startTestApp(
      {
        NODEPLANE_LOCAL_CHAIN: "0",
        NODEPLANE_CRYPTO_CONFIRMATIONS: "2",
        NODEPLANE_CRYPTO_POLL_MS: "200",
        NODEPLANE_BILLING_CLOCK_MS: "3600000",
      },
      { database },
    );
  } finally {
    if (saved === undefined) delete process.env.NODEPLANE_NETWORKS_CONFIG;
    else process.env.NODEPLANE_NETWORKS_CONFIG = saved;
  }
}, 60_000);

afterAll(async () => {
  await app?.close();
  await db?.$client.end();
  await database?.drop();
  await rpc?.close();
  await anvil?.stop();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

interface Charge {
  code: string;
  status: string;
  type: string | null;
  invoiceId: string | null;
  address: string;
  amountWei: string;
  amountCents: number;
}
const CHARGE = "code status type invoiceId address amountWei amountCents";

const topUp = (client: GqlClient, input: Record<string, unknown>) =>
  client.gql<{ createCoinbaseCharge: Charge }>(
    `mutation($input: CreateCryptoChargeInput!) { createCoinbaseCharge(input: $input) { ${CHARGE} } }`,
    { input },
  );

const balanceOf = async (client: GqlClient) =>
  (await client.gqlOk<{ billingCustomer: { balance: number } }>("{ billingCustomer { balance } }")).billingCustomer
    .balance;

interface Line {
  type: string;
  amount: number;
  description: string;
}

const previewOf = async (client: GqlClient) =>
  (
    await client.gqlOk<{
      viewer: { subscription: { upcomingInvoicePreview: { amountDueCents: number; lines: Line[] } } };
    }>("{ viewer { subscription { upcomingInvoicePreview { amountDueCents lines { type amount description } } } } }")
  ).viewer.subscription.upcomingInvoicePreview;

/** A real transfer from one of anvil's funded accounts, then the watcher's confirmation of the charge. */
async function pay(client: GqlClient, charge: Charge) {
  await rpc.call("eth_sendTransaction", [
    { from: payer, to: charge.address, value: `0x${BigInt(charge.amountWei).toString(16)}` },
  ]);
  await expect
    .poll(
      async () =>
        (
          await client.gqlOk<{ coinbaseChargeStatus: { status: string } }>(
            "query($code: String!) { coinbaseChargeStatus(chargeCode: $code) { status } }",
            { code: charge.code },
          )
        ).coinbaseChargeStatus.status,
      { timeout: 30_000, interval: 200 },
    )
    .toBe("CONFIRMED");
}

/** Ends the account's period a second after it started and closes it; answers its invoice and lines. */
async function closePeriod(client: GqlClient, accountId: string) {
  await db.$client.query(
    "update subscriptions set current_period_end = current_period_start + interval '1 second' where account_id = $1",
    [accountId],
  );
  await closeEndedPeriodsOfAll(untaxedBilling(db, app.services.events), new Date(Date.now() + 2000));
  const { invoices } = await client.gqlOk<{
    invoices: {
      edges: {
        node: { id: string; status: string; totalCents: number; amountRemainingCents: number; lines: Line[] };
      }[];
    };
  }>(
    "{ invoices(first: 1) { edges { node { id status totalCents amountRemainingCents lines { type amount description } } } } }",
  );
  return invoices.edges[0].node;
}

describe("crypto top-ups", () => {
  it("a top-up confirmed on anvil credits the balance, which the next invoice takes before its card is charged", {
    timeout: 90_000,
  }, async () => {
    const user = await signUp(app);
    await user.client.gqlOk(
      "mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { subscription { id } } }",
      { input: { plan: "b6_accelerate" } },
    );
    const made = await topUp(user.client, { type: "CRYPTO_TOP_UP", amountCents: 10_000 });
    expect(made.errors).toBeUndefined();
    const charge = made.data?.createCoinbaseCharge as Charge;
    expect(charge).toMatchObject({ status: "NEW", type: "CRYPTO_TOP_UP", invoiceId: null, amountCents: 10_000 });
    // $100 at the default $3,000 an ether, rounded up to the wei.
    expect(charge.amountWei).toBe(((10_000n * 10n ** 18n + 299_999n) / 300_000n).toString());
    expect(await balanceOf(user.client)).toBe(0);

    await pay(user.client, charge);
    expect(await balanceOf(user.client)).toBe(10_000);
    // The preview takes it now, last, as the invoice will.
    const preview = await previewOf(user.client);
    expect(preview.lines.at(-1)).toEqual({ type: "BALANCE", amount: -10_000, description: "Account credit applied" });
    expect(preview.amountDueCents).toBe(preview.lines.reduce((sum, l) => sum + l.amount, 0));

    const invoice = await closePeriod(user.client, user.viewer.id);
    const charged = invoice.lines.filter((l) => l.type !== "BALANCE").reduce((sum, l) => sum + l.amount, 0);
    expect(charged).toBeGreaterThan(10_000);
    expect(invoice.lines.at(-1)).toEqual({ type: "BALANCE", amount: -10_000, description: "Account credit applied" });
    expect(invoice.totalCents).toBe(charged - 10_000);
    expect(invoice.totalCents).toBe(invoice.lines.reduce((sum, l) => sum + l.amount, 0));
    expect(invoice).toMatchObject({ status: "open", amountRemainingCents: invoice.totalCents });
    expect(await balanceOf(user.client)).toBe(0);
    // The watcher looking again changes nothing: the credit was written once.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await balanceOf(user.client)).toBe(0);
  });

  it("a credit larger than the invoice pays it whole, and what is left waits for the next", {
    timeout: 90_000,
  }, async () => {
    const user = await signUp(app);
    await user.client.gqlOk(
      "mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { subscription { id } } }",
      { input: { plan: "b6_accelerate" } },
    );
    const charge = (await topUp(user.client, { type: "CRYPTO_TOP_UP", amountCents: 1_000_000 })).data
      ?.createCoinbaseCharge as Charge;
    await pay(user.client, charge);
    const invoice = await closePeriod(user.client, user.viewer.id);
    const charged = invoice.lines.filter((l) => l.type !== "BALANCE").reduce((sum, l) => sum + l.amount, 0);
    expect(invoice.lines.at(-1)).toMatchObject({ type: "BALANCE", amount: -charged });
    expect(invoice).toMatchObject({ status: "paid", totalCents: 0, amountRemainingCents: 0 });
    expect(await balanceOf(user.client)).toBe(1_000_000 - charged);
    // Nothing is left to charge: the invoice was never due.
    const retried = await user.client.gql("mutation($id: ID!) { retryPayment(invoiceId: $id) { charge { id } } }", {
      id: invoice.id,
    });
    expect(retried.errors?.[0]?.extensions?.code).toBe("CONFLICT");
  });

  it("refuses a top-up without an amount, with an invoice, out of bounds, or of the subscription types", async () => {
    const user = await signUp(app);
    const cases: [Record<string, unknown>, string][] = [
      [{ type: "CRYPTO_TOP_UP" }, "/amountCents"],
      [{ type: "CRYPTO_TOP_UP", amountCents: 100 }, "/amountCents"],
      [{ type: "CRYPTO_TOP_UP", amountCents: 5_000_000 }, "/amountCents"],
      [{ type: "CRYPTO_TOP_UP", amountCents: 1000, invoiceId: "00000000-0000-4000-8000-000000000000" }, "/invoiceId"],
      [{ type: "CREATE_SUBSCRIPTION", amountCents: 1000 }, "/type"],
      [{ amountCents: 1000 }, "/amountCents"],
      [{}, "/invoiceId"],
    ];
    for (const [input, pointer] of cases) {
      const r = await topUp(user.client, input);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(input)).toBe("BAD_USER_INPUT");
      expect(
        ((r.errors?.[0]?.extensions?.fields ?? []) as { pointer: string }[]).map((f) => f.pointer),
        JSON.stringify(input),
      ).toContain(pointer);
    }
    const { rows } = await db.$client.query("select count(*)::int as n from crypto_charges where account_id = $1", [
      user.viewer.id,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
