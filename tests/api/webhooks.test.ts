import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../server/dataplane/destinations/index.ts";
import { destinationAttributesOf, maskUrlPassword } from "../../server/dataplane/engine/config.ts";
import { streamCheckpoints, streams } from "../../server/domains/streams/tables.ts";
import * as webhookStore from "../../server/domains/webhooks/store.ts";
import { secretBox } from "../../server/platform/secrets.ts";
import { signIn, signUp, type TestUser } from "../support/api.ts";
import {
  DEMO_PASSWORD,
  NETWORK,
  type StreamsTestApp,
  startReceiver,
  startStreamsAppAsOwner,
  waitFor,
} from "./streams-harness.ts";

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 5 }));
});
afterAll(async () => {
  await t?.close();
});

const FIELDS =
  "id name status network url compression securityToken hasSecurityToken startRange lastDeliveredBlock sequence";
type Hook = { id: string; status: string; lastDeliveredBlock: number | null; securityToken: string | null };

const webhookOf = async (id: string) => (await owner.client.opOk("Webhook", { id })).webhook;

describe("webhooks", () => {
  it("creates, tests, sends, activates from LATEST, delivers new blocks, pauses, deletes; tenancy and roles", async () => {
    const receiver = await startReceiver();
    try {
      const { createWebhook } = await owner.client.gqlOk<{ createWebhook: Hook }>(
        `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { ${FIELDS} } }`,
        {
          input: {
            name: "new blocks",
            network: NETWORK,
            url: receiver.url,
            securityToken: "hook-secret-token",
            filterFunction: "function main(stream) { return stream.data.map(d => parseInt(d.block.number, 16)); }",
          },
        },
      );
      expect(createWebhook).toMatchObject({ status: "PAUSED", securityToken: "********", hasSecurityToken: true });
      const id = createWebhook.id;

      const test = await owner.client.opOk("TestWebhookUrl", { input: { url: receiver.url } });
      expect(test.testWebhookUrl.success).toBe(true);

      const filter = await owner.client.gqlOk<{ testWebhookFilter: { result: unknown; error: string | null } }>(
        "mutation($input: TestWebhookFilterInput!) { testWebhookFilter(input: $input) { result logs { level message } error } }",
        {
          input: {
            network: NETWORK,
            blockNumber: 2,
            filterFunction: "function main(s) { return s.data[0].receipts.length }",
          },
        },
      );
      expect(filter.testWebhookFilter).toEqual({ result: 0, logs: [], error: null });

      const raw = await owner.client.opOk("WebhookRawPayload", { network: NETWORK, blockNumber: 3 });
      // The payload is JSON (a batch of blocks); the SDL types it as such.
      const payload = raw.webhookRawPayload.payload as { block: { number: string } }[];
      expect(payload[0].block.number).toBe("0x3");

      const before = receiver.received.length;
      const sent = await owner.client.opOk("SendWebhookPayload", { input: { id, blockNumber: 4 } });
      expect(sent.sendWebhookPayload.success).toBe(true);
      const got = receiver.received[before];
      expect(got.json).toEqual([4]);
      expect(
        verifySignature("hook-secret-token", got.body, {
          nonce: String(got.headers["x-qn-nonce"]),
          timestamp: String(got.headers["x-qn-timestamp"]),
          signature: String(got.headers["x-qn-signature"]),
        }),
      ).toBe(true);

      const stranger = await signUp(t.asTestApp);
      expect((await stranger.client.op("Webhook", { id })).errors?.[0].extensions?.code).toBe("NOT_FOUND");
      expect((await stranger.client.op("ActivateWebhook", { id, from: "LAST" })).errors?.[0].extensions?.code).toBe(
        "NOT_FOUND",
      );
      const viewer = await signIn(t.asTestApp, "viewer@nodeplane.local", DEMO_PASSWORD);
      for (const refused of [
        viewer.client.op("ActivateWebhook", { id, from: "LAST" }),
        viewer.client.op("PauseWebhook", { id }),
        viewer.client.op("DeleteWebhook", { id }),
      ]) {
        expect((await refused).errors?.[0].extensions?.code).toBe("FORBIDDEN");
      }

      const tip = Number.parseInt(await t.rpc<string>("eth_blockNumber"), 16);
      await owner.client.opOk("ActivateWebhook", { id, from: "LATEST" });
      await waitFor("tip delivered", async () => (await webhookOf(id)).lastDeliveredBlock === tip);
      await t.rpc("anvil_mine", ["0x2"]);
      await waitFor("new blocks delivered", async () => (await webhookOf(id)).lastDeliveredBlock === tip + 2);
      const delivered = receiver.received.slice(before + 1).map((r) => r.json);
      expect(delivered).toEqual([[tip], [tip + 1], [tip + 2]]);

      expect((await owner.client.opOk("PauseWebhook", { id })).pauseWebhook.status).toBe("PAUSED");
      await t.engine.flushMetrics();
      const { webhookMetrics } = await owner.client.opOk("WebhookMetrics", {
        id,
        startDate: new Date(Date.now() - 3_600_000),
      });
      expect(webhookMetrics).toMatchObject({ processed: 3, delivered: 3, credits: 3 });
      expect((await owner.client.opOk("DeleteWebhook", { id })).deleteWebhook.success).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});

describe("a password in a destination's URL (Basic authentication)", () => {
  it("is shown masked, stored sealed as other secrets are, and kept when the URL comes back masked", async () => {
    const url = "https://hook-user:hook-secret-1@example.com/hook";
    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string; url: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id url } }",
      { input: { name: "with credentials", network: NETWORK, url, status: "PAUSED" } },
    );
    const masked = "https://hook-user:********@example.com/hook";
    expect(createWebhook.url).toBe(masked);
    const { createStream } = await owner.client.gqlOk<{
      createStream: { id: string; destinationAttributes: { url: string } };
    }>("mutation($input: CreateStreamInput!) { createStream(input: $input) { id destinationAttributes } }", {
      input: {
        name: "with credentials",
        network: NETWORK,
        dataset: "BLOCK",
        destination: "WEBHOOK",
        destinationAttributes: { url },
        startRange: 1,
        status: "PAUSED",
      },
    });
    expect(createStream.destinationAttributes.url).toBe(masked);
    // The console sends back what it was shown; a new password replaces the stored one.
    await owner.client.gqlOk("mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { id } }", {
      input: { id: createWebhook.id, url: `${masked}2` },
    });
    await owner.client.gqlOk("mutation($input: UpdateStreamInput!) { updateStream(input: $input) { id } }", {
      input: { id: createStream.id, destinationAttributes: { url: "https://other:hook-secret-2@example.com/x" } },
    });
    const rowOf = async (id: string) => (await t.db.select().from(streams).where(eq(streams.id, id)))[0];
    const box = secretBox({ dataDir: t.dataDir });
    // The row holds the URL masked, its password only sealed; a delivery connects with the whole URL.
    for (const [id, whole] of [
      [createWebhook.id, "https://hook-user:hook-secret-1@example.com/hook2"],
      [createStream.id, "https://other:hook-secret-2@example.com/x"],
    ]) {
      const row = await rowOf(id);
      expect(row.destinationAttributes.url).toBe(maskUrlPassword(whole));
      expect(JSON.stringify(row)).not.toContain("hook-secret");
      expect(destinationAttributesOf(box, row)).toMatchObject({ url: whole });
    }
    // A row stored before URL passwords were sealed: its password is sealed at its next change, and kept.
    const legacy = "https://hook-user:legacy-secret@example.com/old";
    const before = await rowOf(createWebhook.id);
    await t.db
      .update(streams)
      .set({ destinationAttributes: { ...before.destinationAttributes, url: legacy }, destinationSecrets: null })
      .where(eq(streams.id, createWebhook.id));
    expect((await webhookOf(createWebhook.id)) as unknown).toMatchObject({ url: maskUrlPassword(legacy) });
    await owner.client.gqlOk("mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { id } }", {
      input: { id: createWebhook.id, compression: "GZIP" },
    });
    const resealed = await rowOf(createWebhook.id);
    expect(JSON.stringify(resealed)).not.toContain("legacy-secret");
    expect(destinationAttributesOf(box, resealed)).toMatchObject({ url: legacy });
  });

  it("keeps each account's webhooks to it in the store: another account reads and changes none, and no stream is a webhook", async () => {
    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "mine", network: NETWORK, url: "https://example.com/mine", status: "PAUSED" } },
    );
    const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "a stream",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "https://example.com/stream" },
          startRange: 1,
          status: "PAUSED",
        },
      },
    );
    const id = createWebhook.id;
    const mine = owner.viewer.id;
    const other = (await signUp(t.asTestApp)).viewer.id;
    const page = { limit: 500, after: null };
    const checkpointOf = async (streamId: string) =>
      (await t.db.select().from(streamCheckpoints).where(eq(streamCheckpoints.streamId, streamId)))[0];

    expect((await webhookStore.getWebhook(t.db, mine, id))?.id).toBe(id);
    expect((await webhookStore.listWebhooks(t.db, mine, page)).rows.map((r) => r.id)).toContain(id);
    // Another account: not found, not listed, not deleted, its checkpoint not moved.
    expect(await webhookStore.getWebhook(t.db, other, id)).toBeUndefined();
    expect(await webhookStore.listWebhooks(t.db, other, page)).toEqual({ rows: [], totalCount: 0 });
    expect(await webhookStore.listWebhooks(t.db, other, { ...page, search: id })).toEqual({ rows: [], totalCount: 0 });
    expect(await webhookStore.failingWebhooks(t.db, other, 20)).toEqual([]);
    await webhookStore.setCheckpoint(t.db, other, id, 1234);
    expect(await checkpointOf(id)).toBeUndefined();
    expect(await webhookStore.deleteWebhook(t.db, other, id)).toBe(false);
    expect((await webhookStore.getWebhook(t.db, mine, id))?.id).toBe(id);
    // The account's own stream is no webhook: the webhooks' store neither reads nor changes it.
    expect(await webhookStore.getWebhook(t.db, mine, createStream.id)).toBeUndefined();
    expect((await webhookStore.listWebhooks(t.db, mine, page)).rows.map((r) => r.id)).not.toContain(createStream.id);
    await webhookStore.setCheckpoint(t.db, mine, createStream.id, 1234);
    expect(await checkpointOf(createStream.id)).toBeUndefined();
    expect(await webhookStore.deleteWebhook(t.db, mine, createStream.id)).toBe(false);
    // Its own account changes it.
    await webhookStore.setCheckpoint(t.db, mine, id, 1234);
    expect((await checkpointOf(id))?.nextBlock).toBe(1234);
    expect(await webhookStore.deleteWebhook(t.db, mine, id)).toBe(true);
    expect(await webhookStore.getWebhook(t.db, mine, id)).toBeUndefined();
  });
});
