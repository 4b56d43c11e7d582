import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDestination, type DestinationAttributes } from "../../../server/dataplane/destinations/index.ts";
import { EgressPolicy, parseEgressAllow } from "../../../server/platform/egress.ts";
import { freePort } from "../../support/ports.ts";

/**
 * Every destination kind under the default egress policy, pointed at a loopback listener: the
 * connection test and a delivery say why they are refused, and nothing reaches the listener.
 */
const ctx = { streamId: "s-1", network: "local", dataset: "BLOCK" };
const batch = { startBlock: 1, endBlock: 1, payloadJson: "[]" };
const REFUSED =
  "refused by the egress policy: 127.0.0.1 is a loopback address; an operator can allow it with NODEPLANE_EGRESS_ALLOW";

let listener: net.Server;
let port: number;
let accepted = 0;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

const destinations = (at: number): [string, DestinationAttributes][] => [
  ["WEBHOOK", { type: "WEBHOOK", url: `http://127.0.0.1:${at}/hook` }],
  ["WEBHOOK by decimal host", { type: "WEBHOOK", url: `http://2130706433:${at}/hook` }],
  ["WEBHOOK over https", { type: "WEBHOOK", url: `https://127.0.0.1:${at}/hook` }],
  ["WEBHOOK to localhost", { type: "WEBHOOK", url: `http://localhost:${at}/hook` }],
  [
    "POSTGRES",
    {
      type: "POSTGRES",
      host: "127.0.0.1",
      port: at,
      username: "u",
      database: "d",
      tableName: "t",
      sslmode: "DISABLE",
    },
  ],
  ["S3", { type: "S3", accessKey: "a", secretKey: "secret-key", bucket: "b", endpoint: `http://127.0.0.1:${at}` }],
  [
    "AZURE",
    {
      type: "AZURE",
      storageAccount: "acct",
      sasToken: "sv=2024&sig=abcdefgh",
      container: "blocks",
      endpoint: `http://127.0.0.1:${at}/acct`,
    },
  ],
  [
    "SNOWFLAKE",
    {
      type: "SNOWFLAKE",
      username: "u",
      password: "p",
      account: "xy12345",
      warehouse: "WH",
      database: "DB",
      schema: "PUBLIC",
      tableName: "T",
      host: "127.0.0.1",
      port: at,
      protocol: "http",
    },
  ],
];

describe("destinations under the default egress policy", () => {
  const egress = new EgressPolicy();

  it.each(destinations(0).map(([name]) => name))(
    "%s: the test and a delivery are refused before connecting",
    async (name) => {
      const attrs = Object.fromEntries(destinations(port))[name];
      const destination = createDestination(attrs, ctx, { egress });
      try {
        const result = await destination.test();
        expect(result.ok).toBe(false);
        expect(result.message).toContain(name.includes("localhost") ? "localhost is a loopback address" : REFUSED);
        const failure = await destination.deliver(batch).then(
          () => null,
          (e: unknown) => e as { message: string; retryable: boolean },
        );
        expect(failure?.message).toContain("refused by the egress policy");
        // The allow list has to change first: retrying will not help.
        expect(failure?.retryable).toBe(false);
      } finally {
        await destination.close();
      }
      expect(accepted).toBe(0);
    },
  );

  it.each(destinations(0).map(([name]) => name))("%s: an open and a closed port give the same answer", async (name) => {
    const closed = await freePort();
    const answers = [];
    for (const at of [port, closed]) {
      const destination = createDestination(Object.fromEntries(destinations(at))[name], ctx, { egress });
      try {
        answers.push((await destination.test()).message.replaceAll(String(at), "PORT"));
      } finally {
        await destination.close();
      }
    }
    expect(answers[0]).toBe(answers[1]);
    expect(accepted).toBe(0);
  });

  it("connects when the operator allows the address", async () => {
    const allowed = new EgressPolicy({ allow: parseEgressAllow("127.0.0.1/32") });
    const destination = createDestination({ type: "WEBHOOK", url: `http://127.0.0.1:${port}/hook` }, ctx, {
      egress: allowed,
    });
    try {
      const result = await destination.test();
      expect(result.message).not.toContain("refused by the egress policy");
    } finally {
      await destination.close();
    }
    expect(accepted).toBeGreaterThan(0);
  });
});
