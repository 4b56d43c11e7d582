import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifySignature } from "../../server/dataplane/destinations/index.ts";
import { signIn, signUp, type TestUser } from "../support/api.ts";
import {
  blockNumbers,
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
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 30 }));
});
afterAll(async () => {
  await t?.close();
});

const STREAM_FIELDS =
  "id name status statusReason network dataset datasetBatchSize destination destinationAttributes hasSecrets startRange endRange nextBlock lastDeliveredBlock sequence region";

async function create(user: TestUser, input: Record<string, unknown>) {
  return user.client.gql<{ createStream: Record<string, unknown> & { id: string } }>(
    `mutation($input: CreateStreamInput!) { createStream(input: $input) { ${STREAM_FIELDS} } }`,
    { input },
  );
}

async function streamOf(user: TestUser, id: string) {
  const { stream } = await user.client.gqlOk<{ stream: Record<string, unknown> & { status: string } }>(
    `query($id: ID!) { stream(id: $id) { ${STREAM_FIELDS} } }`,
    { id },
  );
  return stream;
}

const webhookInput = (url: string, extra: Record<string, unknown> = {}) => ({
  name: "blocks",
  network: NETWORK,
  dataset: "BLOCK",
  destination: "WEBHOOK",
  destinationAttributes: { url, securityToken: "s3cret-token-value", maxRetry: 3, retryIntervalSec: 0 },
  startRange: 1,
  endRange: 12,
  datasetBatchSize: 3,
  ...extra,
});

describe("stream lifecycle, tenancy and roles", () => {
  it("creates paused, masks secrets, updates, pauses and deletes; other accounts and viewers are refused", async () => {
    const created = await create(owner, webhookInput("http://127.0.0.1:9/none"));
    expect(created.errors).toBeUndefined();
    const s = created.data?.createStream as Record<string, unknown> & { id: string };
    expect(s).toMatchObject({ status: "PAUSED", hasSecrets: true, nextBlock: null });
    expect((s.destinationAttributes as Record<string, unknown>).securityToken).toBe("********");
    expect(JSON.stringify(s)).not.toContain("s3cret-token-value");

    const updated = await owner.client.gqlOk<{ updateStream: { name: string; sequence: number; hasSecrets: boolean } }>(
      "mutation($input: UpdateStreamInput!) { updateStream(input: $input) { name sequence hasSecrets } }",
      {
        input: {
          id: s?.id,
          name: "renamed",
          destinationAttributes: { url: "http://127.0.0.1:9/other", securityToken: "********" },
        },
      },
    );
    expect(updated.updateStream).toMatchObject({ name: "renamed", sequence: 1, hasSecrets: true });

    const bad = await create(owner, { ...webhookInput("ftp://x"), datasetBatchSize: 0 });
    expect(bad.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");

    const stranger = await signUp(t.asTestApp);
    const id = s?.id as string;
    for (const [query, vars] of [
      ["query($id: ID!) { stream(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { activateStream(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { pauseStream(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { deleteStream(id: $id) { success } }", { id }],
      ["mutation($input: UpdateStreamInput!) { updateStream(input: $input) { id } }", { input: { id, name: "x" } }],
      ["query($id: ID!) { streamLogs(id: $id) { logs { id } } }", { id }],
    ] as const) {
      expect((await stranger.client.gql(query, vars)).errors?.[0].extensions?.code, query).toBe("NOT_FOUND");
    }
    const { streams } = await stranger.client.gqlOk<{ streams: { totalCount: number } }>("{ streams { totalCount } }");
    expect(streams.totalCount).toBe(0);

    const viewer = await signIn(t.asTestApp, "viewer@nodeplane.local", DEMO_PASSWORD);
    expect(
      (await viewer.client.gqlOk<{ stream: { id: string } }>("query($id: ID!) { stream(id: $id) { id } }", { id }))
        .stream.id,
    ).toBe(id);
    for (const [query, vars] of [
      [
        "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
        { input: webhookInput("http://x.test") },
      ],
      ["mutation($id: ID!) { activateStream(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { pauseStream(id: $id) { id } }", { id }],
      ["mutation($id: ID!) { deleteStream(id: $id) { success } }", { id }],
      ["mutation($id: ID!) { migrateStream(id: $id, region: EUROPE_CENTRAL) { id } }", { id }],
      ["mutation($input: UpdateStreamInput!) { updateStream(input: $input) { id } }", { input: { id, name: "x" } }],
      [
        "mutation($input: TestFilterFunctionInput!) { testFilterFunction(input: $input) { size } }",
        { input: { network: NETWORK, dataset: "BLOCK", blockNumber: 1, filterFunction: "function main(s){return s}" } },
      ],
    ] as const) {
      expect((await viewer.client.gql(query, vars)).errors?.[0].extensions?.code, query).toBe("FORBIDDEN");
    }

    const migrated = await owner.client.gqlOk<{ migrateStream: { region: string } }>(
      "mutation($id: ID!) { migrateStream(id: $id, region: EUROPE_CENTRAL) { region } }",
      { id },
    );
    expect(migrated.migrateStream.region).toBe("EUROPE_CENTRAL");
    const deleted = await owner.client.gqlOk<{ deleteStream: { success: boolean } }>(
      "mutation($id: ID!) { deleteStream(id: $id) { success } }",
      { id },
    );
    expect(deleted.deleteStream.success).toBe(true);
    expect(
      (await owner.client.gql("query($id: ID!) { stream(id: $id) { id } }", { id })).errors?.[0].extensions?.code,
    ).toBe("NOT_FOUND");
  });
});

describe("testing a filter against real blocks", () => {
  it("answers the latest block, raw payload, final payload and a filter test with logs and size", async () => {
    const { streamLatestBlock } = await owner.client.gqlOk<{ streamLatestBlock: number }>(
      `{ streamLatestBlock(network: "${NETWORK}") }`,
    );
    expect(streamLatestBlock).toBeGreaterThanOrEqual(30);
    const raw = await owner.client.gqlOk<{ streamRawPayload: { payload: unknown; size: number; preview: string } }>(
      `{ streamRawPayload(network: "${NETWORK}", dataset: BLOCK, blockNumber: 3, batchSize: 2) { payload size preview } }`,
    );
    expect(blockNumbers(raw.streamRawPayload.payload)).toEqual([3, 4]);
    expect(raw.streamRawPayload.size).toBe(Buffer.byteLength(JSON.stringify(raw.streamRawPayload.payload)));

    const source = `function main(stream) { console.log("n", stream.data.length); return stream.data.map(b => parseInt(b.number, 16)); }`;
    const final = await owner.client.gqlOk<{ streamFinalPayload: { payload: unknown } }>(
      `query($f: String) { streamFinalPayload(network: "${NETWORK}", dataset: BLOCK, blockNumber: 5, batchSize: 3, filterFunction: $f) { payload } }`,
      { f: source },
    );
    expect(final.streamFinalPayload.payload).toEqual([5, 6, 7]);

    const tested = await owner.client.gqlOk<{
      testFilterFunction: {
        result: unknown;
        logs: { level: string; message: string }[];
        size: number;
        error: string | null;
      };
    }>(
      "mutation($input: TestFilterFunctionInput!) { testFilterFunction(input: $input) { result logs { level message } size error } }",
      {
        input: { network: NETWORK, dataset: "BLOCK", blockNumber: 2, batchSize: 2, filterFunction: source },
      },
    );
    expect(tested.testFilterFunction).toMatchObject({ result: [2, 3], size: 5, error: null });
    expect(tested.testFilterFunction.logs[0]).toMatchObject({ level: "INFO" });

    const loop = await owner.client.gqlOk<{ testFilterFunction: { error: string; errorKind: string } }>(
      "mutation($input: TestFilterFunctionInput!) { testFilterFunction(input: $input) { error errorKind } }",
      {
        input: {
          network: NETWORK,
          dataset: "BLOCK",
          blockNumber: 2,
          filterFunction: "function main(){ while(true){} }",
        },
      },
    );
    expect(loop.testFilterFunction.errorKind).toBe("TIMEOUT");

    const future = await owner.client.gql(
      `{ streamRawPayload(network: "${NETWORK}", dataset: BLOCK, blockNumber: 999999) { size } }`,
    );
    expect(future.errors?.[0].extensions?.code).toBe("BAD_USER_INPUT");
  });
});

describe("delivery", () => {
  it("delivers every block of the range once, in order, signed, then completes", async () => {
    const receiver = await startReceiver();
    try {
      const { data } = await create(owner, {
        ...webhookInput(receiver.url),
        status: "ACTIVE",
        includeStreamMetadata: "HEADER",
      });
      const id = data?.createStream.id as string;
      await waitFor("completion", async () => (await streamOf(owner, id)).status === "COMPLETED");
      const blocks = receiver.received.flatMap((r) => blockNumbers(r.json));
      expect(blocks).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(receiver.received.map((r) => r.headers["x-qn-batch-start-range"])).toEqual(["1", "4", "7", "10"]);
      for (const r of receiver.received) {
        const ok = verifySignature("s3cret-token-value", r.body, {
          nonce: String(r.headers["x-qn-nonce"]),
          timestamp: String(r.headers["x-qn-timestamp"]),
          signature: String(r.headers["x-qn-signature"]),
        });
        expect(ok).toBe(true);
      }
      const s = await streamOf(owner, id);
      expect(s).toMatchObject({ nextBlock: 13, lastDeliveredBlock: 12 });
      await t.engine.flushMetrics();
      const { streamMetrics } = await owner.client.gqlOk<{
        streamMetrics: {
          datasets: { total: number };
          requests: { total: number };
          bytes: { billableTotal: number };
          latency: { p50: number; p99: number; points: { name: string; timestamp: string; value: number }[] };
          filter: { processedTotal: number; durationDatapoints: { value: number }[] };
        };
      }>(
        "query($id: ID!, $d: DateTime!) { streamMetrics(id: $id, startDate: $d) { datasets { total } requests { total } bytes { billableTotal } latency { p50 p99 points { name timestamp value } } filter { processedTotal durationDatapoints { value } } } }",
        {
          id,
          d: new Date(Date.now() - 3_600_000).toISOString(),
        },
      );
      expect(streamMetrics.datasets.total).toBe(12);
      expect(streamMetrics.requests.total).toBe(4);
      expect(streamMetrics.bytes.billableTotal).toBe(
        receiver.received.reduce((a, r) => a + Buffer.byteLength(r.body), 0),
      );
      expect(streamMetrics.latency.p50).toBeGreaterThan(0);
      // Per minute: each minute with deliveries has its p50, p90 and p99, in order of size.
      const { points } = streamMetrics.latency;
      expect(points.length).toBeGreaterThan(0);
      expect(points.length % 3).toBe(0);
      for (let i = 0; i < points.length; i += 3) {
        expect(points.slice(i, i + 3).map((p) => p.name)).toEqual(["p50", "p90", "p99"]);
        expect(points[i].value).toBeLessThanOrEqual(points[i + 2].value);
      }
      // A quantile of the whole window is at most the largest of the minutes' quantiles.
      expect(Math.max(...points.filter((p) => p.name === "p99").map((p) => p.value))).toBeGreaterThanOrEqual(
        streamMetrics.latency.p99,
      );
      if (streamMetrics.filter.processedTotal > 0)
        expect(streamMetrics.filter.durationDatapoints.length).toBeGreaterThan(0);
    } finally {
      await receiver.close();
    }
  });

  it("retries while the receiver is down and delivers with no gap once it is up", async () => {
    let failuresLeft = 4;
    const receiver = await startReceiver(() => (failuresLeft-- > 0 ? 503 : 200));
    try {
      const { data } = await create(owner, {
        ...webhookInput(receiver.url, {}),
        destinationAttributes: { url: receiver.url, maxRetry: 10, retryIntervalSec: 0 },
        status: "ACTIVE",
        datasetBatchSize: 2,
        endRange: 10,
      });
      const id = data?.createStream.id as string;
      await waitFor("completion", async () => (await streamOf(owner, id)).status === "COMPLETED");
      expect(receiver.received.flatMap((r) => blockNumbers(r.json))).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
      await t.engine.flushMetrics();
      const { streamMetrics } = await owner.client.gqlOk<{
        streamMetrics: { retries: { total: number }; errors: { total: number } };
      }>(
        "query($id: ID!, $d: DateTime!) { streamMetrics(id: $id, startDate: $d) { retries { total } errors { total } } }",
        { id, d: new Date(Date.now() - 3_600_000).toISOString() },
      );
      expect(streamMetrics.retries.total).toBe(4);
      expect(streamMetrics.errors.total).toBe(4);
    } finally {
      await receiver.close();
    }
  });

  it("pauses after maxRetry failures, logs it and mails notificationEmail to the outbox", async () => {
    const receiver = await startReceiver(() => 500);
    try {
      const { data } = await create(owner, {
        ...webhookInput(receiver.url),
        destinationAttributes: { url: receiver.url, maxRetry: 2, retryIntervalSec: 0 },
        notificationEmail: "ops@example.com",
        status: "ACTIVE",
      });
      const id = data?.createStream.id as string;
      const s = await waitFor("pause", async () => {
        const x = await streamOf(owner, id);
        return x.status === "PAUSED" ? x : null;
      });
      expect(s.statusReason).toMatch(/HTTP 500.*after 3 attempts/);
      expect(s.nextBlock).toBe(1);
      const { streamLogs } = await owner.client.gqlOk<{ streamLogs: { logs: { level: string; message: string }[] } }>(
        "query($id: ID!) { streamLogs(id: $id, levels: [ERROR]) { logs { level message } } }",
        { id },
      );
      expect(streamLogs.logs[0].message).toMatch(/Stream paused/);
      const { notificationOutbox } = await owner.client.gqlOk<{
        notificationOutbox: { emailConnected: boolean; notifications: { to: string; subject: string }[] };
      }>("{ notificationOutbox { emailConnected notifications { to subject } } }");
      expect(notificationOutbox.emailConnected).toBe(false);
      expect(notificationOutbox.notifications[0]).toMatchObject({ to: "ops@example.com" });
      expect(notificationOutbox.notifications[0].subject).toMatch(/paused/);
    } finally {
      await receiver.close();
    }
  });

  it("logs its user's activation and pause, and the run's first delivery", async () => {
    const receiver = await startReceiver();
    try {
      const { data } = await create(owner, webhookInput(receiver.url, { endRange: 1_000_000 }));
      const id = data?.createStream.id as string;
      await owner.client.gqlOk("mutation($id: ID!) { activateStream(id: $id) { id } }", { id });
      const infoLines = async () => {
        const { streamLogs } = await owner.client.gqlOk<{ streamLogs: { logs: { message: string }[] } }>(
          "query($id: ID!) { streamLogs(id: $id, levels: [INFO]) { logs { message } } }",
          { id },
        );
        return streamLogs.logs.map((l) => l.message);
      };
      const delivering = /^Stream delivering: blocks \d+–\d+ delivered/;
      await waitFor("a delivery logged", async () =>
        (await infoLines()).some((m) => delivering.test(m)) ? true : null,
      );
      await owner.client.gqlOk("mutation($id: ID!) { pauseStream(id: $id) { id } }", { id });
      const messages = await infoLines();
      expect(messages[0]).toMatch(/^Paused/);
      expect(messages).toContainEqual(expect.stringMatching(/^Activated/));
      expect(messages).toContainEqual(expect.stringMatching(delivering));
    } finally {
      await receiver.close();
    }
  });

  it("logs a filter that loops forever or throws, and keeps delivering other streams", async () => {
    const receiver = await startReceiver();
    try {
      const bad = [
        await create(owner, {
          ...webhookInput(receiver.url),
          filterFunction: "function main(s){ while(true){} }",
          status: "ACTIVE",
          destinationAttributes: { url: receiver.url, maxRetry: 0 },
        }),
        await create(owner, {
          ...webhookInput(receiver.url),
          filterFunction: "function main(s){ throw new Error('boom') }",
          status: "ACTIVE",
          destinationAttributes: { url: receiver.url, maxRetry: 0 },
        }),
      ].map((r) => r.data?.createStream.id as string);
      const good = (
        await create(owner, {
          ...webhookInput(receiver.url),
          filterFunction: "function main(s){ return s.data.map(b => b.number) }",
          status: "ACTIVE",
        })
      ).data?.createStream.id as string;
      await waitFor("good completes", async () => (await streamOf(owner, good)).status === "COMPLETED");
      for (const id of bad) {
        const s = await waitFor("bad paused", async () => {
          const x = await streamOf(owner, id);
          return x.status === "PAUSED" ? x : null;
        });
        expect(s.statusReason).toMatch(/filter failed.*(Timed out|Runtime error)/);
      }
      expect(receiver.received.flatMap((r) => (r.json as string[]).map((n) => Number.parseInt(n, 16)))).toEqual(
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
    } finally {
      await receiver.close();
    }
  });
});
