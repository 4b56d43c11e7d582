import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectedRequests } from "../../server/domains/inspector/tables.ts";
import { signUp, type TestUser } from "../support/api.ts";
import { NETWORK, type StreamsTestApp, startStreamsAppAsOwner, waitFor } from "./streams-harness.ts";

/**
 * The request inspector under the default egress policy (NODEPLANE_EGRESS_ALLOW empty): a stream and a
 * webhook deliver to an inspection URL of this service through the real delivery path (signed,
 * compressed), the requests are kept within their bounds, another account can neither read nor change
 * them, and the egress policy opens nothing else of this service or of loopback.
 */
let t: StreamsTestApp;
let owner: TestUser;

beforeAll(async () => {
  ({ t, owner } = await startStreamsAppAsOwner({ blocks: 6, egressAllow: "" }));
});
afterAll(async () => {
  await t?.close();
});

type Url = { id: string; name: string; url: string; answerStatus: number; requestCount: number };
type Req = {
  method: string;
  headers: { name: string; value: string }[];
  body: string;
  bodyTruncated: boolean;
  size: number;
  contentEncoding: string | null;
  signature: string;
};
const URL_FIELDS = "id name url answerStatus requestCount";
const REQUEST_FIELDS = "method headers { name value } body bodyTruncated size contentEncoding signature";

async function createUrl(user: TestUser, input: Record<string, unknown> = {}): Promise<Url> {
  const { createInspectionUrl } = await user.client.gqlOk<{ createInspectionUrl: Url }>(
    `mutation($input: CreateInspectionUrlInput!) { createInspectionUrl(input: $input) { ${URL_FIELDS} } }`,
    { input },
  );
  return createInspectionUrl;
}

async function requestsOf(user: TestUser, id: string): Promise<Req[]> {
  const { inspectedRequests } = await user.client.gqlOk<{ inspectedRequests: Req[] }>(
    `query($id: ID!) { inspectedRequests(id: $id) { ${REQUEST_FIELDS} } }`,
    { id },
  );
  return inspectedRequests;
}

const header = (r: Req, name: string) => r.headers.find((h) => h.name.toLowerCase() === name)?.value;

describe("request inspector", () => {
  it("is made at this service's address and receives any request there", async () => {
    const made = await createUrl(owner, { name: "first" });
    expect(made.url).toMatch(new RegExp(`^${t.url}/inspect/[0-9a-f]{32}$`));
    expect(made).toMatchObject({ name: "first", answerStatus: 200, requestCount: 0 });
    const answer = await fetch(made.url, { method: "PUT", headers: { "x-test": "yes" }, body: "not json" });
    expect(answer.status).toBe(200);
    const [got] = await requestsOf(owner, made.id);
    expect(got).toMatchObject({ method: "PUT", body: "not json", signature: "UNSIGNED", size: 8 });
    expect(header(got, "x-test")).toBe("yes");
    // An encoding it cannot undo: the body is shown as it arrived.
    await fetch(made.url, { method: "POST", headers: { "content-encoding": "br" }, body: "as sent" });
    expect((await requestsOf(owner, made.id))[0]).toMatchObject({ body: "as sent", contentEncoding: "br" });
    const unknown = await fetch(`${t.url}/inspect/${"0".repeat(32)}`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
  });

  it("a stream delivers to it through the real path: signed, gzip-compressed, verified", async () => {
    const target = await createUrl(owner, { name: "stream target" });
    const { createStream } = await owner.client.gqlOk<{ createStream: { id: string } }>(
      "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
      {
        input: {
          name: "to the inspector",
          network: NETWORK,
          dataset: "BLOCK",
          destination: "WEBHOOK",
          destinationAttributes: {
            url: target.url,
            securityToken: "inspector-signing-secret",
            compression: "GZIP",
            maxRetry: 3,
            retryIntervalSec: 0,
          },
          startRange: 1,
          endRange: 4,
          datasetBatchSize: 2,
          status: "ACTIVE",
        },
      },
    );
    const received = await waitFor("two deliveries", async () => {
      const rows = await requestsOf(owner, target.id);
      return rows.length >= 2 ? rows : null;
    });
    for (const r of received) {
      expect(r).toMatchObject({ method: "POST", contentEncoding: "gzip", signature: "VERIFIED", bodyTruncated: false });
      expect(header(r, "x-qn-signature")).toMatch(/^[0-9a-f]{64}$/);
      expect(r.size).toBeLessThan(Buffer.byteLength(r.body));
    }
    const blocks = received.flatMap((r) => (JSON.parse(r.body) as { number: string }[]).map((b) => Number(b.number)));
    expect(blocks.sort()).toEqual([1, 2, 3, 4]);
    // The delivery history records the same two requests (written after the acknowledgement).
    const delivered = await waitFor("the delivery history", async () => {
      const { streamDeliveries } = await owner.client.gqlOk<{
        streamDeliveries: { deliveries: { outcome: string; httpStatus: number }[] };
      }>("query($id: ID!) { streamDeliveries(id: $id) { deliveries { outcome httpStatus } } }", {
        id: createStream.id,
      });
      const rows = streamDeliveries.deliveries.filter((d) => d.outcome === "DELIVERED" && d.httpStatus === 200);
      return rows.length >= 2 ? rows : null;
    });
    expect(delivered).toHaveLength(2);

    // Signed with another token than the stream's: the inspector says it does not match.
    const forged = await fetch(target.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-qn-nonce": "0".repeat(32),
        "x-qn-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-qn-signature": "0".repeat(64),
      },
      body: "[]",
    });
    expect(forged.status).toBe(200);
    expect((await requestsOf(owner, target.id))[0].signature).toBe("MISMATCH");
  });

  it("a webhook's payload reaches it, verified; a non-2xx answer is retried by the delivery path", async () => {
    const target = await createUrl(owner, { name: "webhook target" });
    const { createWebhook } = await owner.client.gqlOk<{ createWebhook: { id: string } }>(
      "mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id } }",
      { input: { name: "hook", network: NETWORK, url: target.url, securityToken: "hook-token" } },
    );
    const sent = await owner.client.opOk("SendWebhookPayload", { input: { id: createWebhook.id, blockNumber: 3 } });
    expect(sent.sendWebhookPayload.success).toBe(true);
    const [got] = await requestsOf(owner, target.id);
    expect(got).toMatchObject({ method: "POST", signature: "VERIFIED" });

    const failing = await createUrl(owner, { name: "answers 503", answerStatus: 503 });
    await owner.client.gqlOk("mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }", {
      input: {
        name: "retried",
        network: NETWORK,
        dataset: "BLOCK",
        destination: "WEBHOOK",
        destinationAttributes: { url: failing.url, maxRetry: 2, retryIntervalSec: 0 },
        startRange: 1,
        endRange: 1,
        status: "ACTIVE",
      },
    });
    const tries = await waitFor("the first try and its retries", async () => {
      const rows = await requestsOf(owner, failing.id);
      return rows.length >= 3 ? rows : null;
    });
    expect(tries.every((r) => r.body === tries[0].body)).toBe(true);
  });

  it("keeps the newest 100 requests of the last 24 hours and 256 KiB of a body; refuses bodies over 1 MiB", async () => {
    const target = await createUrl(owner, { name: "bounds" });
    for (let i = 1; i <= 103; i++) await fetch(target.url, { method: "POST", body: String(i) });
    const kept = await requestsOf(owner, target.id);
    expect(kept).toHaveLength(100);
    expect(kept[0].body).toBe("103");
    expect(kept[99].body).toBe("4");

    const big = "x".repeat(300 * 1024);
    await fetch(target.url, { method: "POST", headers: { "content-encoding": "gzip" }, body: gzipSync(big) });
    const [cut] = await requestsOf(owner, target.id);
    expect(cut.bodyTruncated).toBe(true);
    expect(cut.body.length).toBe(256 * 1024);
    expect(cut.size).toBeLessThan(10 * 1024);

    const tooLarge = await fetch(target.url, { method: "POST", body: Buffer.alloc(1024 * 1024 + 1, 97) });
    expect(tooLarge.status).toBe(413);

    // A request received 25 hours ago is no longer shown, and the next one received drops it.
    await t.db.execute(
      sql`update ${inspectedRequests} set received_at = now() - interval '25 hours' where id = (select min(id) from ${inspectedRequests} where inspection_url_id = ${target.id})`,
    );
    expect(await requestsOf(owner, target.id)).toHaveLength(99);
    await fetch(target.url, { method: "POST", body: "after" });
    const [{ n }] = (
      await t.db.execute(
        sql`select count(*)::int as n from ${inspectedRequests} where inspection_url_id = ${target.id}`,
      )
    ).rows as { n: number }[];
    expect(n).toBe(100);
  });

  it("another account can neither read nor change an inspection URL or its requests", async () => {
    const target = await createUrl(owner, { name: "mine" });
    await fetch(target.url, { method: "POST", body: "private" });
    const { inspectedRequests: mine } = await owner.client.gqlOk<{ inspectedRequests: { id: string }[] }>(
      "query($id: ID!) { inspectedRequests(id: $id) { id } }",
      { id: target.id },
    );
    const one = { id: target.id, requestId: mine[0].id };
    const { inspectedRequest } = await owner.client.opOk("InspectedRequest", one);
    expect(inspectedRequest.body).toBe("private");
    const stranger = await signUp(t.asTestApp);
    expect((await stranger.client.op("InspectedRequest", one)).errors?.[0].extensions?.code).toBe("NOT_FOUND");
    for (const [query, vars] of [
      ["query($id: ID!) { inspectionUrl(id: $id) { id } }", { id: target.id }],
      ["query($id: ID!) { inspectedRequests(id: $id) { body } }", { id: target.id }],
      ["mutation($id: ID!) { clearInspectedRequests(id: $id) { success } }", { id: target.id }],
      ["mutation($id: ID!) { deleteInspectionUrl(id: $id) { success } }", { id: target.id }],
    ] as const) {
      expect((await stranger.client.gql(query, vars)).errors?.[0].extensions?.code, query).toBe("NOT_FOUND");
    }
    const { inspectionUrls } = await stranger.client.gqlOk<{ inspectionUrls: Url[] }>("{ inspectionUrls { id } }");
    expect(inspectionUrls).toEqual([]);
    expect((await requestsOf(owner, target.id)).map((r) => r.body)).toEqual(["private"]);
  });

  it("the egress policy opens the inspector's route on this service's origin and nothing else", async () => {
    const target = await createUrl(owner, { name: "attacked" });
    const origin = new URL(target.url);
    const refusedUrls = [
      `${t.url}/graphql`,
      `${t.url}/healthz`,
      `${target.url}/../../graphql`,
      `${target.url}?next=/graphql`,
      `${target.url}x`,
      `http://user:pass@${origin.host}${origin.pathname}`,
      // The same path on loopback on another port (the embedded database's, a local node's, any).
      `http://127.0.0.1:${t.anvil.httpUrl.split(":").pop()}${origin.pathname}`,
      // Another loopback address than the ones the service makes its links with.
      `http://127.0.0.2:${origin.port}${origin.pathname}`,
    ];
    for (const url of refusedUrls) {
      const { errors } = await owner.client.gql(
        "mutation($input: CreateStreamInput!) { createStream(input: $input) { id } }",
        {
          input: {
            name: "probe",
            network: NETWORK,
            dataset: "BLOCK",
            destination: "WEBHOOK",
            destinationAttributes: { url, headers: { host: origin.host } },
            startRange: 1,
            endRange: 1,
          },
        },
      );
      const test = await owner.client.opOk("TestWebhookUrl", { input: { url } });
      expect(test.testWebhookUrl.success, url).toBe(false);
      expect(test.testWebhookUrl.message, url).toContain("refused by the egress policy");
      // Refused on save too: each names a loopback address, on the field that names it.
      expect(errors?.[0].extensions?.code, url).toBe("BAD_USER_INPUT");
      expect(JSON.stringify(errors?.[0].extensions), url).toContain("egress policy");
    }
    const allowed = await owner.client.opOk("TestWebhookUrl", { input: { url: target.url } });
    expect(allowed.testWebhookUrl.success).toBe(true);
  });
});
