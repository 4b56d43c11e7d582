import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  BZIP2_UNSUPPORTED,
  createDestination,
  type DestinationError,
  signPayload,
  verifySignature,
  type WebhookAttributes,
} from "../../../server/dataplane/destinations/index.ts";
import { testEgress } from "../../support/egress.ts";

interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: string;
}

const TOKEN = "whsec_super-secret-token-123456";
let server: Server;
let base: string;
let received: Received[] = [];
let reply: { status: number; body: string; delayMs?: number; stallBody?: boolean } = { status: 200, body: "ok" };

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw).toString() : raw.toString();
    received.push({ headers: req.headers, raw, body });
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    res.statusCode = reply.status;
    if (reply.stallBody) res.write(reply.body);
    else res.end(reply.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  received = [];
  reply = { status: 200, body: "ok" };
});

const ctx = { streamId: "stream-1", network: "local", dataset: "BLOCK" };
const batch = { startBlock: 10, endBlock: 12, payloadJson: '[{"n":10},{"n":11},{"n":12}]' };

function webhook(extra: Partial<WebhookAttributes> = {}, metadata: "BODY" | "HEADER" | "NONE" = "NONE") {
  return createDestination(
    { type: "WEBHOOK", url: `${base}/hook`, securityToken: TOKEN, headers: { "x-custom": "yes" }, ...extra },
    { ...ctx, metadata },
    { egress: testEgress },
  );
}

function signed(r: Received): boolean {
  return verifySignature(TOKEN, r.body, {
    nonce: String(r.headers["x-qn-nonce"]),
    timestamp: String(r.headers["x-qn-timestamp"]),
    signature: String(r.headers["x-qn-signature"]),
  });
}

describe("webhook destination", () => {
  it("POSTs the payload with custom headers, signed so the receiver can verify it", async () => {
    const ack = await webhook().deliver(batch);
    expect(ack).toMatchObject({ detail: "HTTP 200", bytes: Buffer.byteLength(batch.payloadJson) });
    const [r] = received;
    expect(r.body).toBe(batch.payloadJson);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["x-custom"]).toBe("yes");
    expect(signed(r)).toBe(true);
    expect(
      verifySignature("wrong-token", r.body, {
        nonce: String(r.headers["x-qn-nonce"]),
        timestamp: String(r.headers["x-qn-timestamp"]),
        signature: String(r.headers["x-qn-signature"]),
      }),
    ).toBe(false);
    expect(
      verifySignature(TOKEN, `${r.body} `, {
        nonce: String(r.headers["x-qn-nonce"]),
        timestamp: String(r.headers["x-qn-timestamp"]),
        signature: String(r.headers["x-qn-signature"]),
      }),
    ).toBe(false);
  });

  it("sends a delivery prepared ahead as deliver would, signed again when it waited over a second", async () => {
    const d = webhook({}, "HEADER");
    const ack = await d.prepare?.(batch).send();
    expect(ack).toMatchObject({ detail: "HTTP 200", bytes: Buffer.byteLength(batch.payloadJson) });
    expect(received[0].body).toBe(batch.payloadJson);
    expect(received[0].headers).toMatchObject({ "x-custom": "yes", "x-qn-batch-start-range": "10" });
    expect(signed(received[0])).toBe(true);
    // Prepared, then left waiting ten minutes (the batch before it was retried): its timestamp is renewed.
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    try {
      const waiting = d.prepare?.(batch);
      vi.advanceTimersByTime(600_000);
      await waiting?.send();
      expect(Number(received[1].headers["x-qn-timestamp"])).toBe(Math.floor(Date.now() / 1000));
    } finally {
      vi.useRealTimers();
    }
    expect(signed(received[1])).toBe(false); // ten minutes ahead of the real clock
    reply = { status: 503, body: "down" };
    await expect(d.prepare?.(batch).send()).rejects.toMatchObject({ status: 503, retryable: true });
  });

  it("gzips the body when asked and signs the uncompressed body", async () => {
    const ack = await webhook({ compression: "GZIP" }).deliver(batch);
    const [r] = received;
    expect(r.headers["content-encoding"]).toBe("gzip");
    expect(r.raw.length).toBe(ack.bytes);
    expect(r.body).toBe(batch.payloadJson);
    expect(signed(r)).toBe(true);
  });

  it("puts metadata in the body, in headers, or nowhere", async () => {
    await webhook({}, "BODY").deliver({ ...batch, isReorg: true });
    expect(JSON.parse(received[0].body)).toEqual({
      data: JSON.parse(batch.payloadJson),
      metadata: {
        stream_id: "stream-1",
        network: "local",
        dataset: "BLOCK",
        batch_start_range: 10,
        batch_end_range: 12,
        data_size_bytes: Buffer.byteLength(batch.payloadJson),
        is_reorg: true,
      },
    });
    await webhook({}, "HEADER").deliver(batch);
    expect(received[1].body).toBe(batch.payloadJson);
    expect(received[1].headers).toMatchObject({
      "x-qn-batch-start-range": "10",
      "x-qn-batch-end-range": "12",
      "x-qn-data-size": String(Buffer.byteLength(batch.payloadJson)),
      "x-qn-reorg": "false",
    });
    await webhook({}, "NONE").deliver(batch);
    expect(received[2].headers["x-qn-batch-start-range"]).toBeUndefined();
  });

  it("treats a non-2xx answer as a failure with the status and a trimmed body", async () => {
    reply = { status: 503, body: "x".repeat(2000) };
    const err = (await webhook()
      .deliver(batch)
      .catch((e: unknown) => e)) as DestinationError;
    expect(err.status).toBe(503);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`webhook answered HTTP 503: ${"x".repeat(500)}…`);
    reply = { status: 400, body: "bad" };
    const bad = (await webhook()
      .deliver(batch)
      .catch((e: unknown) => e)) as DestinationError;
    expect([bad.status, bad.retryable, bad.message]).toEqual([400, false, "webhook answered HTTP 400: bad"]);
  });

  it("gives up after the post timeout", async () => {
    reply = { status: 200, body: "late", delayMs: 3_000 };
    const t = Date.now();
    const err = (await webhook({ postTimeoutSec: 1 })
      .deliver(batch)
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/no answer within 1 s/);
    expect(Date.now() - t).toBeLessThan(2_500);
  });

  it("takes a 2xx whose answer body never ends as delivered, within the post timeout", async () => {
    reply = { status: 200, body: "partial", stallBody: true };
    const t = Date.now();
    const ack = await webhook({ postTimeoutSec: 1 }).deliver(batch);
    expect(ack.detail).toBe("HTTP 200");
    expect(Date.now() - t).toBeLessThan(2_500);
  });

  it("reports an unreachable receiver", async () => {
    const d = createDestination({ type: "WEBHOOK", url: "http://127.0.0.1:1/hook" }, ctx, { egress: testEgress });
    const r = await d.test();
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/webhook POST to 127\.0\.0\.1:1 failed: .*ECONNREFUSED/);
  });

  it("test() posts an empty signed batch marked as a test", async () => {
    expect(await webhook().test()).toMatchObject({ ok: true, message: "webhook answered HTTP 200" });
    expect(received[0]).toMatchObject({ body: "[]" });
    expect(received[0].headers["x-qn-test"]).toBe("true");
    expect(signed(received[0])).toBe(true);
  });

  it("never lets the security token into an error, even when the receiver echoes it", async () => {
    reply = { status: 500, body: `server config: token=${TOKEN}` };
    const err = (await webhook()
      .deliver(batch)
      .catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain(TOKEN);
    expect(err.message).toContain("token=***");
    const t = await webhook().test();
    expect(t.message).not.toContain(TOKEN);
  });

  it("gives every signature a fresh 32-hex-character nonce, across the random draws", () => {
    const nonces = Array.from({ length: 600 }, () => signPayload(TOKEN, "[]").nonce);
    expect(nonces.every((n) => /^[0-9a-f]{32}$/.test(n))).toBe(true);
    expect(new Set(nonces).size).toBe(600);
  });

  it("refuses BZIP2 and bad URLs when created", () => {
    expect(() => webhook({ compression: "BZIP2" })).toThrow(BZIP2_UNSUPPORTED);
    expect(() => webhook({ url: "ftp://example.com" })).toThrow("webhook url must be http or https");
    // A line break in a value would let the user write headers (or a request) of their own.
    expect(() => webhook({ headers: { "x-a": "1\r\nx-injected: yes" } })).toThrow(/value HTTP does not allow/);
    expect(() => webhook({ headers: { "bad name": "1" } })).toThrow(/not a valid HTTP header name/);
  });
});
