import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GqlClient, signUp, type TestUser } from "../support/api.ts";
import { NETWORK, type StreamsTestApp, startStreamsAppAsOwner } from "./streams-harness.ts";

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner());
});
afterAll(async () => {
  await t?.close();
});

const PERMISSIONS = `{ streamPermissions {
  destinations { value label disabled reason }
  compression { value label disabled reason }
  blockTipDelay realTimeReorg
  chainConfigs { chain label icon disabled comingSoon beta needsUpgrade
    networks { value label disabled comingSoon beta needsUpgrade reason datasets { value label disabled reason } } }
} }`;

interface Option {
  value: string;
  label: string;
  disabled: boolean;
  reason: string | null;
}
interface Permissions {
  destinations: Option[];
  compression: Option[];
  blockTipDelay: boolean;
  realTimeReorg: boolean;
  chainConfigs: {
    chain: string;
    networks: { value: string; needsUpgrade: boolean; datasets: Option[] }[];
  }[];
}

const permissionsOf = async (user: TestUser) =>
  (await user.client.gqlOk<{ streamPermissions: Permissions }>(PERMISSIONS)).streamPermissions;

const networkOf = (p: Permissions, value: string) => {
  const n = p.chainConfigs.flatMap((c) => c.networks).find((x) => x.value === value);
  if (!n) throw new Error(`no ${value}`);
  return n;
};
const dataset = (p: Permissions, network: string, value: string) =>
  networkOf(p, network).datasets.find((d) => d.value === value);

const streamInput = (extra: Record<string, unknown>) => ({
  name: "p",
  network: NETWORK,
  dataset: "BLOCK",
  destination: "WEBHOOK",
  destinationAttributes: { url: "http://127.0.0.1:9/none" },
  startRange: 1,
  ...extra,
});

describe("stream permissions", () => {
  it("marks what the anvil node serves available and everything else disabled with a reason", async () => {
    const p = await permissionsOf(owner);
    // anvil answers eth_getBlockByNumber, eth_getBlockReceipts, eth_getLogs, trace_block and debug_traceBlockByNumber.
    for (const d of ["BLOCK", "RECEIPTS", "BLOCK_WITH_RECEIPTS", "LOGS", "TRANSACTIONS"])
      expect(dataset(p, NETWORK, d), d).toMatchObject({ disabled: false, reason: null });
    expect(dataset(p, NETWORK, "LEDGER")).toMatchObject({ disabled: true, reason: expect.stringContaining("EVM") });

    const noNode = dataset(p, "ethereum-sepolia", "BLOCK");
    expect(noNode?.disabled).toBe(true);
    expect(noNode?.reason).toContain("No chain node serves ethereum-sepolia");

    const nonEvm = p.chainConfigs.find((c) => c.chain === "solana")?.networks[0];
    expect(nonEvm?.datasets.every((d) => d.disabled && d.reason)).toBe(true);

    const dest = Object.fromEntries(p.destinations.map((d) => [d.value, d]));
    for (const d of ["KAFKA", "MONGO", "MYSQL", "REDIS"]) {
      expect(dest[d]?.disabled, d).toBe(true);
      expect(dest[d]?.reason, d).toBeTruthy();
    }
    for (const d of ["WEBHOOK", "S3", "AZURE", "POSTGRES", "SNOWFLAKE", "FUNCTION"])
      expect(dest[d], d).toMatchObject({ disabled: false, reason: null });
    expect(p.compression.find((c) => c.value === "BZIP2")).toMatchObject({ disabled: true });
    expect(p).toMatchObject({ blockTipDelay: true, realTimeReorg: true });
  });

  it("lists every network's datasets flat, the same entries as chainConfigs", async () => {
    const { streamPermissions } = await owner.client.gqlOk<{
      streamPermissions: Permissions & { networkDatasets: (Option & { network: string })[] };
    }>(
      `{ streamPermissions { chainConfigs { networks { value datasets { value label disabled reason } } } networkDatasets { network value label disabled reason } } }`,
    );
    const nested = streamPermissions.chainConfigs.flatMap((c) =>
      c.networks.flatMap((n) => n.datasets.map((d) => ({ network: n.value, ...d }))),
    );
    expect(streamPermissions.networkDatasets).toEqual(nested);
    expect(streamPermissions.networkDatasets.find((d) => d.network === NETWORK && d.value === "BLOCK")).toMatchObject({
      disabled: false,
    });
  });

  it("is the same catalogue for another account, and needs a session", async () => {
    const stranger = await signUp(t.asTestApp);
    const strip = (p: Permissions) => JSON.stringify(p, (k, v) => (k === "needsUpgrade" ? undefined : (v as unknown)));
    expect(strip(await permissionsOf(stranger))).toBe(strip(await permissionsOf(owner)));

    const anonymous = await new GqlClient(t.url).gql(PERMISSIONS);
    expect(anonymous.errors?.[0].extensions?.code).toBe("UNAUTHENTICATED");
  });

  it("refuses to create a stream on what the permissions mark disabled", async () => {
    const create = (extra: Record<string, unknown>) =>
      owner.client.gql("mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }", {
        input: streamInput(extra),
      });
    const pointers = async (extra: Record<string, unknown>) => {
      const r = await create(extra);
      expect(r.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
      return JSON.stringify(r.errors?.[0].extensions);
    };
    expect(await pointers({ network: "ethereum-sepolia" })).toContain('"/dataset"');
    expect(
      await pointers({
        destination: "KAFKA",
        destinationAttributes: { brokers: "kafka.example.com:9092", topic: "blocks" },
      }),
    ).toContain('"/destination"');
    // Destinations not built yet still validate their settings by their schema (the form's), naming the field.
    for (const [destination, destinationAttributes, field] of [
      ["KAFKA", { brokers: "kafka.example.com", topic: "blocks" }, "brokers"],
      ["KAFKA", { brokers: "kafka.example.com:9092", topic: "blocks", saslMechanism: "GSSAPI" }, "saslMechanism"],
      ["MONGO", { host: "db.example.com", database: "chain", collection: "system.blocks" }, "collection"],
      ["MYSQL", { host: "db.example.com", username: "u", database: "chain", tableName: "1blocks" }, "tableName"],
      ["MYSQL", { host: "db.example.com", database: "chain", tableName: "blocks" }, "username"],
      ["REDIS", { host: "cache.example.com", key: "blocks", database: 16 }, "database"],
      ["REDIS", { host: "cache.example.com", key: "blocks", collection: "x" }, "collection"],
    ] as const) {
      const r = await create({ destination, destinationAttributes });
      expect(r.errors?.[0].extensions?.code, `${destination} ${field}`).toBe("BAD_USER_INPUT");
      expect(JSON.stringify(r.errors?.[0].extensions), `${destination} ${field}`).toContain(
        `"/destinationAttributes/${field}"`,
      );
    }
    // Checking the connection of one says the same as creating it, before any client is made.
    const checked = await owner.client.gqlOk<{ checkConnection: { success: boolean; message: string } }>(
      "mutation($input: CheckConnectionInput!) { checkConnection(input: $input) { success message } }",
      {
        input: { destination: "KAFKA", destinationAttributes: { brokers: "kafka.example.com:9092", topic: "blocks" } },
      },
    );
    expect(checked.checkConnection).toEqual({ success: false, message: "Kafka destinations are not available yet." });
    // FUNCTION is available; it must name one of the account's functions.
    expect(await pointers({ destination: "FUNCTION", destinationAttributes: { functionID: "f-1" } })).toContain(
      '"/destinationAttributes/functionID"',
    );

    const ok = await create({});
    expect(ok.errors).toBeUndefined();
  });

  it("refuses a network that needs a paid plan to a Free account: streams, webhooks, block reads, function calls", async () => {
    const free = await signUp(t.asTestApp);
    const PAID = "fantom-mainnet";
    const upgrade = { pointer: "/network", message: "Fantom Opera needs a paid plan: upgrade to use it." };
    const refusal = (r: { errors?: { extensions?: Record<string, unknown> }[] }) => r.errors?.[0].extensions;

    const stream = await free.client.gql(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: streamInput({ network: PAID }),
      },
    );
    expect(refusal(stream)).toMatchObject({ code: "BAD_USER_INPUT" });
    expect(refusal(stream)?.fields).toContainEqual(upgrade);
    const webhook = await free.client.gql(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "paid", network: PAID, url: "https://hooks.example.com/in", status: "PAUSED" } },
    );
    expect(refusal(webhook)?.fields).toContainEqual(upgrade);
    for (const read of [
      `{ streamRawPayload(network: "${PAID}", dataset: BLOCK, blockNumber: 1) { size } }`,
      `{ streamFinalPayload(network: "${PAID}", dataset: BLOCK, blockNumber: 1, batchSize: 1, filterFunction: "function main(s) { return s }") { size } }`,
      `{ streamLatestBlock(network: "${PAID}") }`,
      `{ webhookLatestBlock(network: "${PAID}") }`,
    ])
      expect(refusal(await free.client.gql(read)), read).toEqual({ code: "BAD_USER_INPUT", fields: [upgrade] });

    const { createFunction } = await free.client.gqlOk<{ createFunction: { id: string } }>(
      'mutation { createFunction(input: { name: "reader", code: "function main(p) { return p }" }) { id } }',
    );
    const called = await free.client.gql(
      `mutation { callFunction(input: { id: "${createFunction.id}", network: "${PAID}", dataset: BLOCK, blockNumber: 1 }) { id } }`,
    );
    expect(refusal(called)).toEqual({ code: "BAD_USER_INPUT", fields: [upgrade] });
    const http = await free.client.request(`/functions/${createFunction.id}/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ network: PAID, dataset: "BLOCK", block: "latest" }),
    });
    expect(http.status).toBe(400);
    expect(await http.text()).toContain("needs a paid plan");

    // On a paid plan the network is the plan's to use: what stops the read is that no node serves it here.
    const paid = refusal(await owner.client.gql(`{ streamLatestBlock(network: "${PAID}") }`));
    expect(JSON.stringify(paid)).not.toContain("needs a paid plan");
  });

  it("offers stream templates only where a stream made from them is accepted", async () => {
    const { streamTemplates } = await owner.client.gqlOk<{
      streamTemplates: {
        id: string;
        network: string;
        dataset: string;
        startBlock: number | null;
        filterFunction: string;
      }[];
    }>("{ streamTemplates { id network dataset startBlock filterFunction } }");
    expect(streamTemplates.map((t) => t.id)).toContain(`erc20-transfers:${NETWORK}`);
    // Only the network with a chain node here.
    expect(new Set(streamTemplates.map((t) => t.network))).toEqual(new Set([NETWORK]));
    const template = streamTemplates.find((t) => t.id === `erc20-transfers:${NETWORK}`);
    expect(template).toMatchObject({ startBlock: null, filterFunction: expect.stringContaining("function main") });
    const count = async () =>
      (await owner.client.gqlOk<{ quickstreamsCount: number }>("{ quickstreamsCount }")).quickstreamsCount;
    const before = await count();
    const made = await owner.client.gql("mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }", {
      input: streamInput({
        network: template?.network,
        dataset: template?.dataset,
        filterFunction: template?.filterFunction,
        startRange: -1,
      }),
    });
    expect(made.errors).toBeUndefined();
    expect(await count()).toBe(before + 1);
    const stranger = await signUp(t.asTestApp);
    expect(
      (await stranger.client.gqlOk<{ quickstreamsCount: number }>("{ quickstreamsCount }")).quickstreamsCount,
    ).toBe(0);
  });
});
