/**
 * The proofs' fixtures: one of each kind of thing an account owns, created through the API, and a
 * snapshot of every table to show a refused call wrote nothing.
 */

import { sql } from "drizzle-orm";
import { exportSPKI, generateKeyPair } from "jose";
import { marketplaceCharges } from "../../../server/domains/billing/addon-charges.ts";
import { depositAddresses } from "../../../server/domains/billing/crypto/addresses.ts";
import { insertCharge, nextAddressIndex } from "../../../server/domains/billing/crypto/store.ts";
import { insertCharge as insertPaymentCharge } from "../../../server/domains/billing/payments/store.ts";
import { closeEndedPeriodsOfAll } from "../../../server/domains/billing/service.ts";
import { DEV_CRYPTO_MNEMONIC } from "../../../server/platform/config.ts";
import type { Db } from "../../../server/platform/db/index.ts";
import type { DomainEvents } from "../../../server/platform/events.ts";
import type { TestUser } from "../../support/api.ts";
import type { Kind, Samples } from "./operations.ts";

export async function newPublicKey(): Promise<string> {
  const { publicKey } = await generateKeyPair("RS256", { extractable: true });
  return exportSPKI(publicKey);
}

/** Creates one endpoint, tag, token, key, security entry, limiter, override, function (and a run), upload, inspection URL, API key, add-on install, stream, webhook, invoice, crypto charge and tax id. */
export async function seedOneOfEach(
  owner: TestUser,
  network: string,
  url: string,
  billing: { db: Db; events: DomainEvents },
): Promise<Samples> {
  const gql = owner.client.gqlOk.bind(owner.client);
  const publicKey = await newPublicKey();
  const ids: Partial<Record<Kind, string>> = {};
  const { createEndpoint } = await gql<{ createEndpoint: { id: string; exId: string } }>(
    "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id exId } }",
    { input: { chain: "ethereum", network, label: "proof" } },
  );
  ids.endpoint = createEndpoint.id;
  ids.endpointExId = createEndpoint.exId;
  const e = { e: ids.endpoint };
  const tagged = await gql<{ addEndpointTag: { tags: { tagId: string }[] } }>(
    'mutation($e: ID!) { addEndpointTag(endpointId: $e, label: "proof") { tags { tagId } } }',
    e,
  );
  ids.tag = tagged.addEndpointTag.tags[0].tagId;
  ids.token = (
    await gql<{ createAuthToken: { id: string } }>("mutation($e: ID!) { createAuthToken(id: $e) { id } }", e)
  ).createAuthToken.id;
  ids.jwt = (
    await gql<{ createJwt: { id: string } }>(
      'mutation($e: ID!, $p: String!) { createJwt(id: $e, name: "proof", kid: "proof", publicKey: $p) { id } }',
      { ...e, p: publicKey },
    )
  ).createJwt.id;
  const entries = [
    ["referrer", 'createReferrer(endpointId: $e, referrer: "app.example.com")'],
    ["ip", 'createIp(endpointId: $e, ip: "10.0.0.1")'],
    ["domainMask", `createDomainMask(endpointId: $e, host: "proof-${ids.endpointExId}.example.com")`],
    ["requestFilter", 'createRequestFilter(endpointId: $e, method: "eth_call")'],
  ] as const;
  for (const [kind, call] of entries) {
    const data = await gql<Record<string, { id: string }>>(`mutation($e: ID!) { ${call} { id } }`, e);
    ids[kind] = Object.values(data)[0].id;
  }
  const limiter = await gql<{ createRateLimiter: { id: string; rates: { id: string }[] } }>(
    'mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 10, methods: ["eth_call"], reason: "proof", limitByIP: false) { id rates { id } } }',
    e,
  );
  ids.rateLimiter = limiter.createRateLimiter.id;
  ids.rateLimiterRate = limiter.createRateLimiter.rates[0].id;
  const override = await gql<{ createRateLimitOverride: { limitOverrides: { rateLimit: { id: string } }[] } }>(
    'mutation($e: ID!) { createRateLimitOverride(endpointId: $e, bucket: RPM, rateLimit: 100, reason: "proof") { limitOverrides { rateLimit { id } } } }',
    e,
  );
  ids.limitOverride = override.createRateLimitOverride.limitOverrides[0].rateLimit.id;
  const keyOverride = await gql<{ createRateLimitKeyOverride: { keyOverrides: { rateLimit: { id: string } }[] } }>(
    'mutation($e: ID!) { createRateLimitKeyOverride(endpointId: $e, bucket: RPS, reason: "proof") { keyOverrides { rateLimit { id } } } }',
    e,
  );
  ids.keyOverride = keyOverride.createRateLimitKeyOverride.keyOverrides[0].rateLimit.id;
  ids.function = (
    await gql<{ createFunction: { id: string } }>(
      "mutation($input: CreateFunctionInput!) { createFunction(input: $input) { id } }",
      { input: { name: "proof", code: "function main(params) { return params.data; }" } },
    )
  ).createFunction.id;
  ids.functionActivation = (
    await gql<{ callFunction: { id: string } }>(
      "mutation($input: CallFunctionInput!) { callFunction(input: $input) { id } }",
      { input: { id: ids.function, params: 1 } },
    )
  ).callFunction.id;
  ids.kvUpload = (
    await gql<{ initiateListUpload: { uploadId: string } }>(
      'mutation { initiateListUpload(input: { key: "proof" }) { uploadId } }',
    )
  ).initiateListUpload.uploadId;
  ids.inspectionUrl = (
    await gql<{ createInspectionUrl: { id: string } }>(
      'mutation { createInspectionUrl(input: { name: "proof" }) { id } }',
    )
  ).createInspectionUrl.id;
  ids.accessToken = (
    await gql<{ createAccessToken: { accessToken: { id: string } } }>(
      'mutation { createAccessToken(input: { name: "proof", role: VIEWER, applications: [CONSOLE_REST] }) { accessToken { id } } }',
    )
  ).createAccessToken.accessToken.id;
  ids.stream = (
    await gql<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "proof",
          network,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url, securityToken: "proof-secret", maxRetry: 1, retryIntervalSec: 0 },
          startRange: 1,
          endRange: 2,
        },
      },
    )
  ).createStream.id;
  ids.webhook = (
    await gql<{ createWebhook: { id: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "proof", network, url } },
    )
  ).createWebhook.id;
  // On its own endpoint, so the add-on is not on ids.endpoint, where an install by the proofs must not conflict.
  const { createEndpoint: addonEndpoint } = await gql<{ createEndpoint: { id: string } }>(
    "mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id } }",
    { input: { chain: "ethereum", network, label: "proof add-on" } },
  );
  ids.addonInstall = (
    await gql<{ installAddon: { id: string } }>(
      'mutation($e: ID!) { installAddon(input: { endpointId: $e, planId: "trace-debug-starter" }) { id } }',
      { e: addonEndpoint.id },
    )
  ).installAddon.id;
  // Only a period's close makes an invoice: the owner's period ends a second ago (PostgreSQL's clock counts
  // microseconds, the close's milliseconds) and is closed here, or by the service's billing clock when its
  // tick takes the subscription's lock first (the close here skips it): the invoice is waited for.
  await billing.db.execute(
    sql`update subscriptions set current_period_end = now() - interval '1 second' where account_id = ${owner.viewer.id}`,
  );
  await closeEndedPeriodsOfAll({ ...billing, addons: marketplaceCharges, taxRateBps: 0 });
  ids.invoice = await firstInvoiceId(owner);
  // A crypto charge is made for an open invoice on a chain with a node; the proofs' service has no chain
  // and their invoice is the Free period's: the row is written as the charge's creation writes it.
  const addressIndex = await nextAddressIndex(billing.db);
  ids.paymentIntent = (
    await insertCharge(billing.db, owner.viewer.id, {
      code: "pi_proofsproofsproofsproofs",
      provider: "STRIPE",
      invoiceId: ids.invoice,
      amountCents: 100,
      network,
      addressIndex,
      address: depositAddresses(DEV_CRYPTO_MNEMONIC)(addressIndex),
      amountWei: "333333333333334",
      status: "NEW",
      expiresAt: new Date(Date.now() + 3_600_000),
    })
  )?.code;
  // A card charge waiting for the payer's authentication, written as a charge of the built-in provider writes it.
  ids.paymentCharge = (
    await insertPaymentCharge(billing.db, owner.viewer.id, {
      invoiceId: ids.invoice,
      idempotencyKey: "proofs",
      provider: "builtin",
      providerChargeId: "builtin_ch_proofs",
      amountCents: 100,
      currency: "usd",
      status: "requires_action",
      failureCode: "authentication_required",
      failureMessage: null,
      methodLabel: "Visa ending 3184",
      cardLast4: "3184",
    })
  ).id;
  ids.taxId = (
    await gql<{ createTaxId: { id: string } }>(
      'mutation { createTaxId(input: { type: "eu_vat", value: "DE123456789" }) { id } }',
    )
  ).createTaxId.id;
  const { team } = await gql<{ team: { userId: string; role: string }[] }>("{ team { userId role } }");
  ids.user = team.find((m) => m.role !== "OWNER")?.userId;
  return { ids, network, url, publicKey };
}

/** Tables whose rows change by merely being signed in or counted, not by what a call asks for. */
const UNTRACKED = /session|sign_in|rate_limit_points|rlflx/;

/** A digest of every row of every table, by table: equal snapshots mean nothing was written. */
export async function snapshot(db: Db): Promise<Record<string, string>> {
  const tables = await db.execute<{ name: string }>(
    sql`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`,
  );
  const digests: Record<string, string> = {};
  for (const { name } of tables.rows) {
    if (UNTRACKED.test(name)) continue;
    const r = await db.execute<{ digest: string | null }>(
      sql.raw(`select md5(string_agg(t::text, '|' order by t::text)) as digest from "${name}" t`),
    );
    digests[name] = r.rows[0].digest ?? "empty";
  }
  return digests;
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((t) => before[t] !== after[t]);
}

/** The account's newest invoice, once a period's close has committed it (at most 10 s). */
async function firstInvoiceId(owner: TestUser): Promise<string> {
  for (const deadline = Date.now() + 10_000; ; ) {
    const { invoices } = await owner.client.gqlOk<{ invoices: { edges: { node: { id: string } }[] } }>(
      "{ invoices(first: 1) { edges { node { id } } } }",
    );
    if (invoices.edges.length > 0) return invoices.edges[0].node.id;
    if (Date.now() > deadline) throw new Error("no invoice 10 s after the owner's period ended");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
