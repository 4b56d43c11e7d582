// Crypto charges paid for real on a local anvil: a transfer to the charge's deposit address moves it
// (underpaid, pending, confirmed) and pays its invoice; too little stays underpaid; a deadline passed
// expires it. The state is the database's: a service stopped and another started carries on, and two
// services watching one chain confirm a charge once.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilNode, startAnvil } from "../../server/dataplane/chain/anvil.ts";
import { RpcClient } from "../../server/dataplane/datasets/rpc.ts";
import { closeEndedPeriodsOfAll } from "../../server/domains/billing/service.ts";
import { type Db, openDatabase } from "../../server/platform/db/index.ts";
import { type GqlClient, signIn, signUp, startTestApp, type TestApp } from "../support/api.ts";
import { untaxedBilling } from "../support/billing.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const NETWORK = "ethereum-sepolia";
const CONFIRMATIONS = 2;

let anvil: AnvilNode;
let rpc: RpcClient;
let database: TestDatabase;
let db: Db;
let networksDir = "";
let payer = "";
const apps: { app: TestApp; logs: string[] }[] = [];

function restoreEnv(name: string, value: string | undefined) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** A service on the shared database, its log kept (info and up) to count what its watcher did. */
async function startService() {
  const logs: string[] = [];
  // startChainNodes reads the process's environment.
  const saved = process.env.NODEPLANE_NETWORKS_CONFIG;
  process.env.NODEPLANE_NETWORKS_CONFIG = join(networksDir, "networks.json");
  try {
    const app = await startTestApp(
      {
        LOG_LEVEL: "info",
        NODEPLANE_LOCAL_CHAIN: "0",
        NODEPLANE_CRYPTO_CONFIRMATIONS: String(CONFIRMATIONS),
        NODEPLANE_CRYPTO_POLL_MS: "200",
        NODEPLANE_BILLING_CLOCK_MS: "3600000",
      },
      { database, logDestination: { write: (line: string) => void logs.push(line) } },
    );
    const running = { app, logs };
    apps.push(running);
    return running;
  } finally {
    restoreEnv("NODEPLANE_NETWORKS_CONFIG", saved);
  }
}

async function stopService(running: { app: TestApp }) {
  apps.splice(apps.indexOf(running as (typeof apps)[number]), 1);
  await running.app.close();
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 11155111, blockTimeSeconds: 1 });
  rpc = new RpcClient(anvil.httpUrl);
  payer = (await rpc.call<string[]>("eth_accounts"))[0];
  networksDir = mkdtempSync(join(tmpdir(), "nodeplane-crypto-"));
  writeFileSync(
    join(networksDir, "networks.json"),
    JSON.stringify({ upstreams: { [NETWORK]: { http: anvil.httpUrl, ws: anvil.wsUrl } } }),
  );
  database = await createTestDatabase();
  db = openDatabase(database.url, 2);
}, 60_000);

afterAll(async () => {
  for (const running of [...apps]) await stopService(running);
  await db?.$client.end();
  await database?.drop();
  await rpc?.close();
  await anvil?.stop();
  if (networksDir) rmSync(networksDir, { recursive: true, force: true });
});

/** A new account on a paid plan whose first period closed into an open invoice; answers the invoice. */
async function accountWithOpenInvoice(app: TestApp) {
  const user = await signUp(app);
  await user.client.gqlOk(
    "mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { subscription { id } } }",
    { input: { plan: "b6_accelerate" } },
  );
  // A period of a second, closed by a clock two seconds on (the database's clock and this one may differ).
  await db.$client.query(
    "update subscriptions set current_period_end = current_period_start + interval '1 second' where account_id = $1",
    [user.viewer.id],
  );
  const later = new Date(Date.now() + 2000);
  await closeEndedPeriodsOfAll(untaxedBilling(db, app.services.events), later);
  const invoice = await invoiceOf(user.client);
  expect(invoice.status).toBe("open");
  return { user, invoice };
}

async function invoiceOf(client: GqlClient, id?: string) {
  const { invoices } = await client.gqlOk<{
    invoices: { edges: { node: { id: string; status: string; amountRemainingCents: number; totalCents: number } }[] };
  }>("{ invoices(first: 5) { edges { node { id status amountRemainingCents totalCents } } } }");
  const found = invoices.edges.map((e) => e.node).find((n) => (id ? n.id === id : n.totalCents > 0));
  if (!found) throw new Error("no invoice");
  return found;
}

const CHARGE_FIELDS =
  "id code status providerStatus address amountWei amountEth receivedWei amountCents chainId paymentUri expiresAt confirmedBlock";
interface Charge {
  id: string;
  code: string;
  status: string;
  providerStatus: string;
  address: string;
  amountWei: string;
  amountEth: string;
  receivedWei: string;
  amountCents: number;
  chainId: number;
  paymentUri: string;
  expiresAt: string;
  confirmedBlock: number | null;
}

async function createCharge(client: GqlClient, invoiceId: string): Promise<Charge> {
  const { createCoinbaseCharge } = await client.gqlOk<{ createCoinbaseCharge: Charge }>(
    `mutation($input: CreateCryptoChargeInput!) { createCoinbaseCharge(input: $input) { ${CHARGE_FIELDS} } }`,
    { input: { invoiceId } },
  );
  return createCoinbaseCharge;
}

async function chargeStatus(client: GqlClient, code: string): Promise<Charge> {
  const { coinbaseChargeStatus } = await client.gqlOk<{ coinbaseChargeStatus: Charge }>(
    `query($code: String!) { coinbaseChargeStatus(chargeCode: $code) { ${CHARGE_FIELDS} } }`,
    { code },
  );
  return coinbaseChargeStatus;
}

/** A real transfer on the chain, from one of anvil's funded accounts; resolves once it is mined. */
async function pay(to: string, wei: bigint) {
  const hash = await rpc.call<string>("eth_sendTransaction", [{ from: payer, to, value: `0x${wei.toString(16)}` }]);
  await expect
    .poll(
      async () => (await rpc.call<{ blockNumber: string } | null>("eth_getTransactionReceipt", [hash]))?.blockNumber,
      {
        timeout: 10_000,
        interval: 100,
      },
    )
    .toBeTruthy();
}

const head = async () => Number.parseInt(await rpc.call<string>("eth_blockNumber"), 16);

async function blocksPass(n: number) {
  const target = (await head()) + n;
  await expect.poll(head, { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(target);
}

/** Log lines of a watcher's moves of `chargeId` to `status`, across the services given. */
const movesTo = (services: { logs: string[] }[], chargeId: string, status: string) =>
  services
    .flatMap((s) => s.logs)
    .map((line) => JSON.parse(line) as { chargeId?: string; to?: string })
    .filter((entry) => entry.chargeId === chargeId && entry.to === status).length;

describe("crypto charges on a local chain", () => {
  it("asks for the invoice's amount at the rate, at a fresh address, and is confirmed by a real transfer", {
    timeout: 90_000,
  }, async () => {
    const service = await startService();
    const { user, invoice } = await accountWithOpenInvoice(service.app);
    const charge = await createCharge(user.client, invoice.id);
    expect(charge.status).toBe("NEW");
    expect(charge.providerStatus).toBe("NEW");
    expect(charge.amountCents).toBe(invoice.amountRemainingCents);
    // $249 at the default $3,000 an ether.
    expect(charge.amountWei).toBe(((BigInt(invoice.amountRemainingCents) * 10n ** 18n) / 300_000n).toString());
    expect(charge.chainId).toBe(11155111);
    expect(charge.paymentUri).toBe(`ethereum:${charge.address}@11155111?value=${charge.amountWei}`);
    expect(await rpc.call<string>("eth_getBalance", [charge.address, "latest"])).toBe("0x0");
    // Asked again while it is open: the same charge, not a second address.
    expect((await createCharge(user.client, invoice.id)).code).toBe(charge.code);

    // Another account finds neither the charge nor the invoice.
    const other = await signUp(service.app);
    const peek = await other.client.gql(`query($code: String!) { coinbaseChargeStatus(chargeCode: $code) { id } }`, {
      code: charge.code,
    });
    expect(peek.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const payOthers = await other.client.gql(
      "mutation($input: CreateCryptoChargeInput!) { createCoinbaseCharge(input: $input) { id } }",
      { input: { invoiceId: invoice.id } },
    );
    expect(payOthers.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");

    await pay(charge.address, BigInt(charge.amountWei));
    await expect
      .poll(async () => (await chargeStatus(user.client, charge.code)).status, { timeout: 30_000 })
      .toBe("CONFIRMED");
    const confirmed = await chargeStatus(user.client, charge.code);
    expect(confirmed.providerStatus).toBe("COMPLETED");
    expect(confirmed.receivedWei).toBe(charge.amountWei);
    expect(confirmed.confirmedBlock).not.toBeNull();
    expect(await invoiceOf(user.client, invoice.id)).toMatchObject({ status: "paid", amountRemainingCents: 0 });
    // A paid invoice has nothing left to charge.
    const again = await user.client.gql(
      "mutation($input: CreateCryptoChargeInput!) { createCoinbaseCharge(input: $input) { id } }",
      { input: { invoiceId: invoice.id } },
    );
    expect(again.errors?.[0]?.extensions?.code).toBe("CONFLICT");
    expect(movesTo([service], charge.id, "CONFIRMED")).toBe(1);
  });

  it("paid in full, makes a past-due subscription active again, as a card payment does", {
    timeout: 90_000,
  }, async () => {
    const [service] = apps;
    const { user, invoice } = await accountWithOpenInvoice(service.app);
    // As a declined card charge of this invoice leaves it (tests/api/payments.test.ts makes it so).
    await db.$client.query("update subscriptions set status = 'past_due' where account_id = $1", [user.viewer.id]);
    const subscription = async () =>
      (
        await user.client.gqlOk<{ viewer: { subscription: { status: string; isActive: boolean } } }>(
          "{ viewer { subscription { status isActive } } }",
        )
      ).viewer.subscription;
    expect(await subscription()).toMatchObject({ status: "past_due", isActive: false });
    const charge = await createCharge(user.client, invoice.id);
    await pay(charge.address, BigInt(charge.amountWei));
    await expect
      .poll(async () => (await chargeStatus(user.client, charge.code)).status, { timeout: 30_000 })
      .toBe("CONFIRMED");
    expect(await invoiceOf(user.client, invoice.id)).toMatchObject({ status: "paid", amountRemainingCents: 0 });
    expect(await subscription()).toMatchObject({ status: "active", isActive: true });
  });

  it("keeps an underpaid charge underpaid, its invoice open, however many blocks pass", {
    timeout: 90_000,
  }, async () => {
    const [service] = apps;
    const { user, invoice } = await accountWithOpenInvoice(service.app);
    const charge = await createCharge(user.client, invoice.id);
    const short = BigInt(charge.amountWei) - 1n;
    await pay(charge.address, short);
    await expect
      .poll(async () => (await chargeStatus(user.client, charge.code)).status, { timeout: 30_000 })
      .toBe("UNDERPAID");
    await blocksPass(CONFIRMATIONS + 3);
    const still = await chargeStatus(user.client, charge.code);
    expect(still).toMatchObject({ status: "UNDERPAID", providerStatus: "UNRESOLVED", receivedWei: short.toString() });
    expect((await invoiceOf(user.client, invoice.id)).status).toBe("open");
  });

  it("expires at its deadline without the amount, and stays expired when paid after", { timeout: 90_000 }, async () => {
    const [service] = apps;
    const { user, invoice } = await accountWithOpenInvoice(service.app);
    const charge = await createCharge(user.client, invoice.id);
    await db.$client.query("update crypto_charges set expires_at = now() - interval '1 second' where id = $1", [
      charge.id,
    ]);
    await expect
      .poll(async () => (await chargeStatus(user.client, charge.code)).status, { timeout: 30_000 })
      .toBe("EXPIRED");
    await pay(charge.address, BigInt(charge.amountWei));
    await blocksPass(CONFIRMATIONS + 2);
    expect((await chargeStatus(user.client, charge.code)).status).toBe("EXPIRED");
    expect((await invoiceOf(user.client, invoice.id)).status).toBe("open");
    // The invoice may be charged again: a new charge, at a new address; this time through Stripe's
    // operation, read by its PaymentIntent id and in Stripe's words (and not by Coinbase's query).
    const { createStripeCryptoCharge: next } = await user.client.gqlOk<{
      createStripeCryptoCharge: { paymentIntentId: string; clientSecret: string | null; charge: Charge };
    }>(
      `mutation($input: CreateCryptoChargeInput!) { createStripeCryptoCharge(input: $input) { paymentIntentId clientSecret charge { ${CHARGE_FIELDS} } } }`,
      { input: { invoiceId: invoice.id } },
    );
    expect(next.paymentIntentId).toMatch(/^pi_/);
    expect(next.clientSecret).toBeNull();
    expect(next.charge.address).not.toBe(charge.address);
    const { stripePaymentIntentStatus } = await user.client.gqlOk<{ stripePaymentIntentStatus: Charge }>(
      `query($id: String!) { stripePaymentIntentStatus(paymentIntentId: $id) { ${CHARGE_FIELDS} } }`,
      { id: next.paymentIntentId },
    );
    expect(stripePaymentIntentStatus).toMatchObject({ status: "NEW", providerStatus: "requires_action" });
    const asCoinbase = await user.client.gql(
      `query($code: String!) { coinbaseChargeStatus(chargeCode: $code) { id } }`,
      {
        code: next.paymentIntentId,
      },
    );
    expect(asCoinbase.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });

  it("carries on after a restart, and two services watching one chain confirm a charge once", {
    timeout: 180_000,
  }, async () => {
    const [first] = apps;
    const { user, invoice } = await accountWithOpenInvoice(first.app);
    const charge = await createCharge(user.client, invoice.id);
    const half = BigInt(charge.amountWei) / 2n;
    await pay(charge.address, half);
    await expect
      .poll(async () => (await chargeStatus(user.client, charge.code)).status, { timeout: 30_000 })
      .toBe("UNDERPAID");
    // Stopped; the rest is paid and confirmed on the chain while no service watches.
    await stopService(first);
    await pay(charge.address, BigInt(charge.amountWei) - half);
    await blocksPass(CONFIRMATIONS + 1);
    const second = await startService();
    const third = await startService();
    const { client } = await signIn(second.app, user.email, user.password);
    await expect
      .poll(async () => (await chargeStatus(client, charge.code)).status, { timeout: 30_000 })
      .toBe("CONFIRMED");
    expect(await invoiceOf(client, invoice.id)).toMatchObject({ status: "paid", amountRemainingCents: 0 });

    // Both services watch every head: each charge they share is moved by one of them.
    const { user: racer, invoice: raced } = await accountWithOpenInvoice(second.app);
    const racing = await createCharge(racer.client, raced.id);
    await pay(racing.address, BigInt(racing.amountWei));
    await expect
      .poll(async () => (await chargeStatus(racer.client, racing.code)).status, { timeout: 30_000 })
      .toBe("CONFIRMED");
    await blocksPass(2);
    expect(movesTo([second, third], charge.id, "CONFIRMED")).toBe(1);
    expect(movesTo([second, third], racing.id, "CONFIRMED")).toBe(1);
    expect(movesTo([second, third], racing.id, "PENDING")).toBeLessThanOrEqual(1);
    expect(await invoiceOf(racer.client, raced.id)).toMatchObject({ status: "paid", amountRemainingCents: 0 });
  });
});
