import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneDeliveries } from "../../server/domains/streams/deliveries.ts";
import { signUp, type TestUser } from "../support/api.ts";
import { NETWORK, type StreamsTestApp, startReceiver, startStreamsAppAsOwner, waitFor } from "./streams-harness.ts";

let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 5 }));
});
afterAll(async () => {
  await t?.close();
});

interface Delivery {
  id: string;
  startBlock: number;
  endBlock: number;
  batches: number;
  attempt: number;
  outcome: string;
  httpStatus: number | null;
  answer: string;
  latencyMs: number;
  bytes: number;
  preview: string | null;
}
interface Page {
  deliveries: Delivery[];
  pageInfo: { endCursor: string | null; hasNextPage: boolean };
  retentionDays: number;
}

const DELIVERY_FIELDS =
  "deliveries { id createdAt startBlock endBlock batches attempt outcome httpStatus answer latencyMs bytes preview isReorg } pageInfo { endCursor hasNextPage } retentionDays";

async function webhookDeliveries(user: TestUser, id: string, args: Record<string, unknown> = {}) {
  return user.client.gql<{ webhookDeliveries: Page }>(
    `query($id: ID!, $first: Int, $after: String, $outcomes: [DeliveryOutcome!], $search: String) {
      webhookDeliveries(id: $id, first: $first, after: $after, outcomes: $outcomes, search: $search) { ${DELIVERY_FIELDS} } }`,
    { id, ...args },
  );
}

async function streamDeliveries(id: string, args: Record<string, unknown> = {}) {
  return (
    await owner.client.gqlOk<{ streamDeliveries: Page }>(
      `query($id: ID!, $first: Int, $after: String, $outcomes: [DeliveryOutcome!], $search: String) {
        streamDeliveries(id: $id, first: $first, after: $after, outcomes: $outcomes, search: $search) { ${DELIVERY_FIELDS} } }`,
      { id, ...args },
    )
  ).streamDeliveries;
}

describe("delivery history", () => {
  it("records each delivered batch with its status, latency, size and preview; pages and searches; other accounts cannot read it", async () => {
    const receiver = await startReceiver();
    try {
      const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(
        "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
        { input: { name: "history", network: NETWORK, url: receiver.url, startRange: 1, status: "ACTIVE" } },
      );
      const id = createWebhook.id;
      await waitFor("five blocks delivered", async () => receiver.received.length >= 5);
      await t.engine.flushMetrics();
      const all = await waitFor("history written", async () => {
        const page = (await webhookDeliveries(owner, id)).data?.webhookDeliveries;
        return page && page.deliveries.length >= 5 ? page : null;
      });
      expect(all.retentionDays).toBe(7); // the demo account's Build plan
      const first = all.deliveries.at(-1) as Delivery;
      expect(first).toMatchObject({
        startBlock: 1,
        endBlock: 1,
        batches: 1,
        attempt: 1,
        outcome: "DELIVERED",
        httpStatus: 200,
        answer: "HTTP 200",
      });
      expect(first.latencyMs).toBeGreaterThan(0);
      expect(first.bytes).toBe(Buffer.byteLength(receiver.received[0].body));
      expect(first.preview).toBe(receiver.received[0].body.slice(0, 1000));
      // Newest first.
      expect(all.deliveries.map((d) => d.startBlock).slice(-5)).toEqual([5, 4, 3, 2, 1]);

      const one = (await webhookDeliveries(owner, id, { first: 2 })).data?.webhookDeliveries as Page;
      expect(one.deliveries).toHaveLength(2);
      expect(one.pageInfo.hasNextPage).toBe(true);
      const two = (await webhookDeliveries(owner, id, { first: 2, after: one.pageInfo.endCursor })).data
        ?.webhookDeliveries as Page;
      expect(two.deliveries.map((d) => d.startBlock)).toEqual(one.deliveries.map((d) => d.startBlock - 2));

      const byBlock = (await webhookDeliveries(owner, id, { search: "3" })).data?.webhookDeliveries as Page;
      expect(byBlock.deliveries.map((d) => d.startBlock)).toEqual([3]);
      const byText = (await webhookDeliveries(owner, id, { search: "http 200" })).data?.webhookDeliveries as Page;
      expect(byText.deliveries.length).toBe(all.deliveries.length);
      const none = (await webhookDeliveries(owner, id, { outcomes: ["FAILED"] })).data?.webhookDeliveries as Page;
      expect(none.deliveries).toEqual([]);
      expect((await webhookDeliveries(owner, id, { after: "not-a-cursor" })).errors?.[0].extensions?.code).toBe(
        "BAD_USER_INPUT",
      );

      const stranger = await signUp(t.asTestApp);
      expect((await webhookDeliveries(stranger, id)).errors?.[0].extensions?.code).toBe("NOT_FOUND");
      // A webhook is not a stream: the stream query does not find it either.
      expect(
        (await owner.client.gql("query($id: ID!) { streamDeliveries(id: $id) { retentionDays } }", { id })).errors?.[0]
          .extensions?.code,
      ).toBe("NOT_FOUND");
      await owner.client.gqlOk("mutation($id: ID!) { pauseWebhook(id: $id) { id } }", { id });
    } finally {
      await receiver.close();
    }
  });

  it("records failed attempts with the HTTP status and answer, and shows the stream as failing, not paused", async () => {
    const receiver = await startReceiver(() => 503);
    try {
      const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
        "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
        {
          input: {
            name: "failing",
            network: NETWORK,
            dataset: "BLOCK",
            destination: "WEBHOOK",
            destinationAttributes: { url: receiver.url, maxRetry: 2, retryIntervalSec: 0 },
            startRange: 1,
            endRange: 3,
            datasetBatchSize: 3,
            status: "ACTIVE",
          },
        },
      );
      const id = createStream.id;
      type Failing = { id: string; status: string; state: string; statusReason: string; failedAt: string | null };
      const failing = await waitFor("stream failed", async () => {
        const { failingStreams } = await owner.client.gqlOk<{ failingStreams: Failing[] }>(
          "{ failingStreams { id status state statusReason failedAt } }",
        );
        return failingStreams.find((s) => s.id === id);
      });
      expect(failing).toMatchObject({ status: "PAUSED", state: "FAILED" });
      expect(failing.failedAt).not.toBeNull();
      expect(failing.statusReason).toMatch(/HTTP 503/);
      await t.engine.flushMetrics();
      const page = await streamDeliveries(id);
      expect(page.deliveries.map((d) => [d.attempt, d.outcome, d.httpStatus, d.startBlock, d.endBlock])).toEqual([
        [3, "FAILED", 503, 1, 3],
        [2, "FAILED", 503, 1, 3],
        [1, "FAILED", 503, 1, 3],
      ]);
      expect(page.deliveries[0].answer).toMatch(/webhook answered HTTP 503: unavailable/);
      expect(page.deliveries[0].preview).toMatch(/^\[\{/);
      expect((await streamDeliveries(id, { search: "503" })).deliveries).toHaveLength(3);
      expect((await streamDeliveries(id, { outcomes: ["DELIVERED"] })).deliveries).toHaveLength(0);

      // Activating clears the failure: it is no longer listed as failing; a user's pause is PAUSED.
      await owner.client.gqlOk("mutation($id: ID!) { activateStream(id: $id) { id } }", { id });
      const paused = await owner.client.gqlOk<{ pauseStream: { status: string; state: string } }>(
        "mutation($id: ID!) { pauseStream(id: $id) { status state } }",
        { id },
      );
      expect(paused.pauseStream).toEqual({ status: "PAUSED", state: "PAUSED" });
      const { failingStreams } = await owner.client.gqlOk<{ failingStreams: { id: string }[] }>(
        "{ failingStreams { id } }",
      );
      expect(failingStreams.map((s) => s.id)).not.toContain(id);
    } finally {
      await receiver.close();
    }
  });

  it("records a failing destination whose answer holds a NUL character, and marks the stream failed", async () => {
    const receiver = await startReceiver(
      () => 500,
      () => "bad\u0000answer",
    );
    try {
      const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
        "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
        {
          input: {
            name: "nul answer",
            network: NETWORK,
            dataset: "BLOCK",
            destination: "WEBHOOK",
            destinationAttributes: { url: receiver.url, maxRetry: 1, retryIntervalSec: 0 },
            startRange: 1,
            endRange: 2,
            datasetBatchSize: 2,
            status: "ACTIVE",
          },
        },
      );
      const id = createStream.id;
      const failing = await waitFor("stream failed", async () => {
        const { failingStreams } = await owner.client.gqlOk<{ failingStreams: { id: string; statusReason: string }[] }>(
          "{ failingStreams { id statusReason } }",
        );
        return failingStreams.find((s) => s.id === id);
      });
      expect(failing.statusReason).toContain("bad\uFFFDanswer");
      await t.engine.flushMetrics();
      const page = await streamDeliveries(id);
      expect(page.deliveries.map((d) => [d.attempt, d.outcome, d.httpStatus])).toEqual([
        [2, "FAILED", 500],
        [1, "FAILED", 500],
      ]);
      expect(page.deliveries[0].answer).toContain("bad\uFFFDanswer");
    } finally {
      await receiver.close();
    }
  });

  it("prunes rows older than the account's plan keeps them", async () => {
    const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "retention",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "http://127.0.0.1:9/none" },
          startRange: 1,
        },
      },
    );
    const free = await signUp(t.asTestApp);
    const { createStream: freeStream } = await free.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "retention",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "http://127.0.0.1:9/none" },
          startRange: 1,
        },
      },
    );
    const insert = async (streamId: string, daysAgo: number, block: number) =>
      t.db.execute(sql`insert into stream_deliveries (account_id, stream_id, created_at, start_block, end_block, attempt,
          outcome, answer, latency_ms, bytes)
        select account_id, id, now() - make_interval(days => ${daysAgo}), ${block}, ${block}, 1, 'DELIVERED', 'HTTP 200', 1, 10
        from streams where id = ${streamId}`);
    // Build keeps 7 days, Free 3.
    await insert(createStream.id, 8, 1);
    await insert(createStream.id, 5, 2);
    await insert(freeStream.id, 5, 1);
    await insert(freeStream.id, 1, 2);
    await pruneDeliveries(t.db);
    expect((await streamDeliveries(createStream.id)).deliveries.map((d) => d.startBlock)).toEqual([2]);
    const freePage = await free.client.gqlOk<{ streamDeliveries: Page }>(
      `query($id: ID!) { streamDeliveries(id: $id) { ${DELIVERY_FIELDS} } }`,
      { id: freeStream.id },
    );
    expect(freePage.streamDeliveries.retentionDays).toBe(3);
    expect(freePage.streamDeliveries.deliveries.map((d) => d.startBlock)).toEqual([2]);
  });
});

describe("filters that do not compile", () => {
  const broken = "function main(stream) {\n  const x = ;\n  return stream.data;\n}";
  const fieldError = (errors: { extensions?: Record<string, unknown> }[] | undefined) => {
    expect(errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
    const fields = errors?.[0].extensions?.fields as { pointer: string; message: string }[];
    return fields.find((f) => f.pointer === "/filterFunction")?.message;
  };

  it("are refused at create and update with their line and column; nothing is written", async () => {
    const before = (await owner.client.gqlOk<{ webhooks: { totalCount: number } }>("{ webhooks { totalCount } }"))
      .webhooks.totalCount;
    const created = await owner.client.gql(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "broken", network: NETWORK, url: "http://127.0.0.1:9/x", filterFunction: broken } },
    );
    expect(fieldError(created.errors)).toMatch(/^Line 2, column \d+: /);
    expect(
      (await owner.client.gqlOk<{ webhooks: { totalCount: number } }>("{ webhooks { totalCount } }")).webhooks
        .totalCount,
    ).toBe(before);

    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      {
        input: {
          name: "fine",
          network: NETWORK,
          url: "http://127.0.0.1:9/x",
          filterFunction: "function main(s) { return s.data; }",
        },
      },
    );
    const updated = await owner.client.gql(
      "mutation($input: UpdateWebhookInput!) { updateWebhook(input: $input) { id } }",
      { input: { id: createWebhook.id, filterFunction: broken } },
    );
    expect(fieldError(updated.errors)).toMatch(/^Line 2, column \d+: /);
    const kept = await owner.client.gqlOk<{ webhook: { filterFunction: string } }>(
      "query($id: ID!) { webhook(id: $id) { filterFunction } }",
      { id: createWebhook.id },
    );
    expect(kept.webhook.filterFunction).toBe("function main(s) { return s.data; }");

    const stream = await owner.client.gql(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "broken",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "http://127.0.0.1:9/x" },
          startRange: 1,
          filterFunction: "function main(stream) {\n  return stream.data.map(b => b.\n}",
        },
      },
    );
    expect(fieldError(stream.errors)).toMatch(/^Line 3, column \d+: /);
    const noMain = await owner.client.gql(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "no main",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: { url: "http://127.0.0.1:9/x" },
          startRange: 1,
          filterFunction: "function handler(stream) { return stream.data; }",
        },
      },
    );
    expect(fieldError(noMain.errors)).toMatch(/must define function main/);
  });
});
