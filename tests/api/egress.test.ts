import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn, startTestApp, type TestApp, type TestUser } from "../support/api.ts";
import { freePort } from "../support/ports.ts";
import {
  DEMO_PASSWORD,
  NETWORK,
  type StreamsTestApp,
  startReceiver,
  startStreamsAppAsOwner,
} from "./streams-harness.ts";

/**
 * The egress policy through the API: with the default policy (NODEPLANE_EGRESS_ALLOW empty) nothing a
 * tenant names may reach loopback, whether to probe ports, reach the service's database or drive the
 * chain node every tenant shares; the operator's allow list opens what it names, and never the
 * service's own port.
 */
const REFUSED =
  "refused by the egress policy: 127.0.0.1 is a loopback address; an operator can allow it with NODEPLANE_EGRESS_ALLOW";

const TEST_WEBHOOK =
  "mutation($input: TestWebhookDestinationInput!) { testWebhookUrl(input: $input) { success message } }";
type TestAnswer = { success: boolean; message: string };

const TEST_SNOWFLAKE = "mutation($input: JSON!) { testSnowflakeDestination(input: $input) { success message } }";
const snowflakeAt = (host: string, port: number) => ({
  username: "loader",
  password: "snowflake-Secret-Password-42",
  account: "xy12345",
  warehouse: "WH",
  database: "DB",
  schema: "PUBLIC",
  tableName: "BLOCKS",
  host,
  port,
  protocol: "http",
});

describe("under the default egress policy", () => {
  let t: StreamsTestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await startStreamsAppAsOwner({ engine: false, blocks: 2, egressAllow: "" }));
  });
  afterAll(async () => {
    await t?.close();
  });

  const testUrl = async (url: string) =>
    (await owner.client.gqlOk<{ testWebhookUrl: TestAnswer }>(TEST_WEBHOOK, { input: { url } })).testWebhookUrl;

  it("testWebhookUrl refuses loopback with the reason, the same for an open and a closed port", async () => {
    const receiver = await startReceiver();
    try {
      const open = await testUrl(receiver.url);
      expect(open.success).toBe(false);
      expect(open.message).toContain(REFUSED);
      expect(receiver.received).toHaveLength(0);
      const openPort = new URL(receiver.url).port;
      const closedPort = String(await freePort());
      const closed = await testUrl(receiver.url.replace(`:${openPort}`, `:${closedPort}`));
      expect(closed.success).toBe(false);
      expect(closed.message.replaceAll(closedPort, "PORT")).toBe(open.message.replaceAll(openPort, "PORT"));
    } finally {
      await receiver.close();
    }
  });

  it.each([
    "http://2130706433/",
    "http://0x7f.1/",
    "http://localhost/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0/",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/",
  ])("testWebhookUrl refuses %s", async (url) => {
    const answer = await testUrl(url);
    expect(answer.success).toBe(false);
    expect(answer.message).toMatch(
      /refused by the egress policy: .* (loopback|unspecified|link-local|private) address.*NODEPLANE_EGRESS_ALLOW/,
    );
  });

  it("testPostgresDestination does not reach the service's own database server", async () => {
    const url = new URL(t.database.url);
    const { testPostgresDestination } = await owner.client.gqlOk<{ testPostgresDestination: TestAnswer }>(
      "mutation($input: JSON!) { testPostgresDestination(input: $input) { success message } }",
      {
        input: {
          host: url.hostname,
          port: Number(url.port),
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password) || "x",
          database: url.pathname.slice(1),
          tableName: "public.accounts",
          sslmode: "DISABLE",
        },
      },
    );
    expect(testPostgresDestination).toEqual({ success: false, message: `PostgreSQL: ${REFUSED}` });
  });

  it("testSnowflakeDestination refuses a host name that resolves to this machine, on the address connected to", async () => {
    // The machine's own name resolves (through the system resolver, as the driver's proxy asks it) to
    // loopback or to one of this machine's addresses: refused either way, the same for open and closed ports.
    const receiver = await startReceiver();
    const testSnowflake = async (port: number) =>
      (
        await owner.client.gqlOk<{ testSnowflakeDestination: TestAnswer }>(TEST_SNOWFLAKE, {
          input: snowflakeAt(os.hostname(), port),
        })
      ).testSnowflakeDestination;
    try {
      const openPort = Number(new URL(receiver.url).port);
      const open = await testSnowflake(openPort);
      expect(open.success).toBe(false);
      expect(open.message).toMatch(
        new RegExp(
          `^Snowflake: cannot connect to account xy12345: refused by the egress policy: ${os.hostname()} resolves to \\S+, (a loopback address|a private address|an address of this machine); an operator can allow it with NODEPLANE_EGRESS_ALLOW$`,
        ),
      );
      const closed = await testSnowflake(await freePort());
      expect(closed).toEqual(open);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  const CREATE_WEBHOOK = "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }";
  const CREATE_STREAM = "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }";
  const pokeNode = (address: string) =>
    `function main(stream) { return { jsonrpc: "2.0", id: 1, method: "anvil_setBalance", params: ["${address}", "0x3635c9adc5dea00000"] }; }`;

  it("a webhook, or a stream's destination, naming a refused address is refused on save, on its field", async () => {
    const { errors } = await owner.client.gql(CREATE_WEBHOOK, {
      input: {
        name: "node poke",
        network: NETWORK,
        url: t.anvil.httpUrl,
        filterFunction: pokeNode("0x00000000000000000000000000000000000000aa"),
      },
    });
    expect(errors?.[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/url", message: `R${REFUSED.slice(1)}.` }],
    });
    const stream = await owner.client.gql(CREATE_STREAM, {
      input: {
        name: "to localhost",
        network: NETWORK,
        dataset: "BLOCK",
        startRange: 1,
        destination: "POSTGRES",
        destinationAttributes: {
          host: "localhost",
          port: 5432,
          database: "d",
          username: "u",
          password: "p",
          tableName: "t",
          sslmode: "DISABLE",
        },
      },
    });
    expect(stream.errors?.[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [
        { pointer: "/destinationAttributes/host", message: expect.stringContaining("localhost is a loopback address") },
      ],
    });
    const list = await owner.client.gqlOk<{ webhooks: { totalCount: number } }>("{ webhooks { totalCount } }");
    expect(list.webhooks.totalCount).toBe(0);

    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(CREATE_WEBHOOK, {
      input: { name: "public", network: NETWORK, url: "https://hooks.example.com/in" },
    });
    const update = await owner.client.gql(
      "mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { id } }",
      { input: { id: createWebhook.id, url: "http://10.1.2.3:8080/in" } },
    );
    expect(update.errors?.[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      fields: [{ pointer: "/url", message: expect.stringContaining("10.1.2.3 is a private address") }],
    });
    const kept = await owner.client.gqlOk<{ webhook: { url: string } }>(
      "query($id: ID!) { webhook(id: $id) { url } }",
      {
        id: createWebhook.id,
      },
    );
    expect(kept.webhook.url).toBe("https://hooks.example.com/in");
  });

  it("a webhook naming the shared chain node by a host name cannot call it (sendWebhookPayload)", async () => {
    // A name is resolved at each connection, so it passes on save and is refused on the address connected to.
    const address = "0x00000000000000000000000000000000000000aa";
    const before = await t.rpc<string>("eth_getBalance", [address, "latest"]);
    const byName = t.anvil.httpUrl.replace("127.0.0.1", os.hostname());
    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(CREATE_WEBHOOK, {
      input: { name: "node poke", network: NETWORK, url: byName, filterFunction: pokeNode(address) },
    });
    const { sendWebhookPayload } = await owner.client.gqlOk<{ sendWebhookPayload: TestAnswer }>(
      "mutation($input: SendWebhookPayloadInput!) { sendWebhookPayload(input: $input) { success message } }",
      { input: { id: createWebhook.id, blockNumber: 1 } },
    );
    expect(sendWebhookPayload.success).toBe(false);
    expect(sendWebhookPayload.message).toMatch(
      new RegExp(
        `refused by the egress policy: ${os.hostname()} resolves to \\S+, (a loopback address|a private address|an address of this machine)`,
      ),
    );
    expect(await t.rpc<string>("eth_getBalance", [address, "latest"])).toBe(before);
  });
});

describe("with NODEPLANE_EGRESS_ALLOW naming the receiver", () => {
  let app: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ NODEPLANE_EGRESS_ALLOW: "127.0.0.1/32" });
    owner = await signIn(app, "demo@nodeplane.local", DEMO_PASSWORD);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("reaches the allowed address, but not addresses the list does not name, nor the service's own port", async () => {
    const receiver = await startReceiver();
    const testUrl = async (url: string) =>
      (await owner.client.gqlOk<{ testWebhookUrl: TestAnswer }>(TEST_WEBHOOK, { input: { url } })).testWebhookUrl;
    try {
      expect(await testUrl(receiver.url)).toMatchObject({ success: true, message: "webhook answered HTTP 200" });
      expect(receiver.received).toHaveLength(1);
      const other = await testUrl(receiver.url.replace("127.0.0.1", "[::1]"));
      expect(other.message).toContain("::1 is a loopback address");
      const own = await testUrl(`${app.url}/graphql`);
      expect(own.success).toBe(false);
      expect(own.message).toContain(`127.0.0.1 port ${new URL(app.url).port} is this service's own port`);
    } finally {
      await receiver.close();
    }
  });

  it("testSnowflakeDestination reaches the allowed receiver through the driver's egress proxy", async () => {
    const receiver = await startReceiver();
    try {
      const { testSnowflakeDestination } = await owner.client.gqlOk<{ testSnowflakeDestination: TestAnswer }>(
        TEST_SNOWFLAKE,
        { input: snowflakeAt("127.0.0.1", Number(new URL(receiver.url).port)) },
      );
      // The receiver is no Snowflake: the login it answers "ok" to fails, after it arrived.
      expect(testSnowflakeDestination.success).toBe(false);
      expect(testSnowflakeDestination.message).toMatch(/^Snowflake: cannot connect to account xy12345: /);
      expect(testSnowflakeDestination.message).not.toContain("refused by the egress policy");
      expect(receiver.received.length).toBeGreaterThanOrEqual(1);
      expect(receiver.received[0].json).toMatchObject({ data: { LOGIN_NAME: "loader", ACCOUNT_NAME: "xy12345" } });
    } finally {
      await receiver.close();
    }
  });
});
