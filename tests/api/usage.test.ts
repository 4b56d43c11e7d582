import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { defaultSecurityOptions } from "../../server/dataplane/proxy/endpoint.ts";
import { currentBillingPeriod } from "../../server/domains/account/billing-period.ts";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { call, type ProxyHarness, startProxyHarness } from "../unit/metering/proxy-harness.ts";

const ctx = useTestApp();
let proxy: ProxyHarness;
beforeAll(async () => {
  proxy = await startProxyHarness(ctx.app.database.url);
});
afterAll(async () => proxy?.close());

async function endpointOf(client: GqlClient, label?: string) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string; network: string; status: string } }>(
    `mutation($input: CreateEndpointInput!) { createEndpoint(input: $input) { id exId network status } }`,
    { input: { chain: "ethereum", network: "ethereum-sepolia", ...(label && { label }) } },
  );
  return data.createEndpoint;
}

interface MethodUsage {
  methodName: string;
  requests: number;
  total: number;
  multiplier: number;
  score: number;
  refused: number;
}

const usageQuery = `query($pastDay: Boolean, $tickType: UsageTickType) { usage(pastDay: $pastDay, tickType: $tickType) {
  startTime endTime totalUsage totalRequests limit
  endpointUsages { endpointId label network status totalUsage requests methodUsages { methodName requests total multiplier score refused } }
  methodUsages { methodName requests total multiplier score archive archiveMultiplier refused }
  usageTicks { x y { name value } } billingPeriods { startTime endTime } } }`;

describe("metering and usage", () => {
  it("counts each call and its credits per endpoint and method; the usage query's totals match what was sent", async () => {
    const user = await signUp(ctx.app);
    const a = await endpointOf(user.client, "a");
    const b = await endpointOf(user.client, "b");
    proxy.put(a, user.viewer.id);
    proxy.put(b, user.viewer.id);
    for (let i = 0; i < 5; i++) expect((await proxy.rpc(a.exId, call("eth_blockNumber"))).status).toBe(200);
    for (let i = 0; i < 3; i++)
      await proxy.rpc(b.exId, call("eth_getBalance", ["0x0000000000000000000000000000000000000001", "latest"]));
    // trace_* costs 4× (anvil answers it; even an error answer is a call served).
    for (let i = 0; i < 2; i++) await proxy.rpc(a.exId, call("trace_block", ["0x1"]));
    // A batch: each call counts.
    await proxy.rpc(b.exId, [call("eth_chainId", [], 1), call("eth_chainId", [], 2)]);
    // A refused request is counted as refused, not billed.
    await proxy.rpc(a.exId, "{not json");
    await proxy.stages.meter.flush();

    const { usage } = await user.client.gqlOk<{
      usage: {
        totalUsage: number;
        totalRequests: number;
        limit: number;
        endpointUsages: { endpointId: string; totalUsage: number; requests: number; methodUsages: MethodUsage[] }[];
        methodUsages: MethodUsage[];
        usageTicks: { x: string; y: { name: string; value: number }[] }[];
        billingPeriods: { startTime: string; endTime: string }[];
      };
    }>(usageQuery);
    expect(usage.totalRequests).toBe(5 + 3 + 2 + 2);
    expect(usage.totalUsage).toBe(5 + 3 + 2 * 4 + 2);
    expect(usage.limit).toBe(10_000_000);
    const byMethod = Object.fromEntries(usage.methodUsages.map((m) => [m.methodName, m]));
    expect(byMethod.eth_blockNumber).toMatchObject({ requests: 5, total: 5, multiplier: 1, score: 1 });
    expect(byMethod.trace_block).toMatchObject({ requests: 2, total: 8, multiplier: 4, score: 4 });
    expect(byMethod.eth_getBalance).toMatchObject({ requests: 3, total: 3 });
    expect(byMethod.eth_chainId).toMatchObject({ requests: 2, total: 2 });
    expect(byMethod["(none)"]).toMatchObject({ requests: 0, total: 0, refused: 1 });
    const endpointA = usage.endpointUsages.find((e) => e.endpointId === a.id);
    const endpointB = usage.endpointUsages.find((e) => e.endpointId === b.id);
    expect(endpointA).toMatchObject({ totalUsage: 13, requests: 7 });
    expect(endpointB).toMatchObject({ totalUsage: 5, requests: 5 });
    const tickSum = usage.usageTicks.flatMap((t) => t.y).reduce((s, v) => s + v.value, 0);
    expect(tickSum).toBe(18);
    expect(usage.billingPeriods.length).toBeGreaterThanOrEqual(1);

    const past = await user.client.gqlOk<{ usage: { totalUsage: number; usageTicks: unknown[] } }>(usageQuery, {
      pastDay: true,
      tickType: "HOUR",
    });
    expect(past.usage.totalUsage).toBe(18);

    const top = await user.client.gqlOk<{
      topEndpoints: { endpointId: string; totalUsage: number; endpointLabel: string }[];
    }>(
      "{ topEndpoints(limit: 5) { endpointId endpointChain endpointSubdomain endpointNetwork endpointLabel endpointStatus totalUsage } }",
    );
    expect(top.topEndpoints.map((t) => [t.endpointLabel, t.totalUsage])).toEqual([
      ["a", 13],
      ["b", 5],
    ]);

    // Another account sees none of it.
    const other = await signUp(ctx.app);
    const theirs = await other.client.gqlOk<{ usage: { totalUsage: number; endpointUsages: unknown[] } }>(usageQuery);
    expect(theirs.usage).toMatchObject({ totalUsage: 0, endpointUsages: [] });
  });

  it("reaching the plan's monthly responses puts active endpoints in LIMIT_REACHED, and a higher limit gives them back", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    await proxy.db.$client.query("update subscriptions set responses_per_month = 4 where account_id = $1", [
      user.viewer.id,
    ]);
    for (let i = 0; i < 4; i++) await proxy.rpc(endpoint.exId, call("eth_chainId"));
    await proxy.stages.meter.flush();
    const status = async () =>
      (
        await user.client.gqlOk<{ endpoint: { status: string } }>(`query($id: ID!) { endpoint(id: $id) { status } }`, {
          id: endpoint.id,
        })
      ).endpoint.status;
    expect(await status()).toBe("LIMIT_REACHED");

    await proxy.db.$client.query("update subscriptions set responses_per_month = 1000 where account_id = $1", [
      user.viewer.id,
    ]);
    await proxy.stages.meter.housekeep();
    expect(await status()).toBe("ACTIVE");
  });
});

/** A WebSocket upgrade the proxy refuses: its status, Retry-After and body. */
function refusedUpgrade(url: string) {
  return new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers["retry-after"] as string | undefined,
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    ws.on("open", () => {
      ws.close();
      reject(new Error("the upgrade was accepted"));
    });
    ws.on("error", () => {});
  });
}

describe("a refusal for the plan's allowance says when to come back", () => {
  it("LIMIT_REACHED carries Retry-After until the billing period ends, on HTTP and on a WebSocket upgrade, and data.retryAfter in the error, with no internal id", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    await proxy.db.$client.query("update subscriptions set responses_per_month = 2 where account_id = $1", [
      user.viewer.id,
    ]);
    for (let i = 0; i < 2; i++) await proxy.rpc(endpoint.exId, call("eth_chainId"));
    await proxy.stages.meter.flush();
    // The service's directory follows the endpoint's new status; this proxy's is told by hand.
    proxy.put({ ...endpoint, status: "LIMIT_REACHED" }, user.viewer.id);
    const { end } = await currentBillingPeriod(proxy.db, user.viewer.id);
    const untilEnd = () => (end.getTime() - Date.now()) / 1000;

    const res = await fetch(`${proxy.url}/rpc/${endpoint.exId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call("eth_chainId")),
    });
    expect(res.status).toBe(429);
    // Before: no Retry-After at all (the proxy did not know when the period ends).
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(Math.abs(retryAfter - untilEnd())).toBeLessThanOrEqual(5);
    const text = await res.text();
    const { error } = JSON.parse(text) as { error: { code: number; message: string; data: { retryAfter: number } } };
    expect(error.code).toBe(-32045);
    expect(error.data.retryAfter).toBe(retryAfter);
    expect(error.message).toMatch(/monthly request limit\. It serves again when the billing period ends, in \d+ s\.$/);
    for (const id of [user.viewer.id, endpoint.id]) expect(text).not.toContain(id);

    const upgrade = await refusedUpgrade(`${proxy.url.replace(/^http/, "ws")}/rpc/${endpoint.exId}`);
    expect(upgrade.status).toBe(429);
    expect(Math.abs(Number(upgrade.retryAfter) - untilEnd())).toBeLessThanOrEqual(5);
    expect(JSON.parse(upgrade.body).error.data.retryAfter).toBe(Number(upgrade.retryAfter));
  });
});

/** The endpoint's usage minutes summed per method: what the meter wrote, by the counting rule's counters. */
async function countsOf(endpointId: string) {
  const { rows } = await proxy.db.$client.query(
    `select method, sum(requests)::int as requests, sum(credits)::int as credits, sum(refused)::int as refused,
       sum(malformed)::int as malformed, sum(unknown_method)::int as "unknownMethod"
     from usage_minutes where endpoint_id = $1 group by method`,
    [endpointId],
  );
  return Object.fromEntries(rows.map((r) => [r.method, { ...r, method: undefined }]));
}

/** One method's line of the usage screen. */
async function shownUsageOf(client: GqlClient, method: string) {
  const { usage } = await client.gqlOk<{ usage: { methodUsages: { methodName: string }[] } }>(
    "{ usage { methodUsages { methodName requests total refused malformed unknownMethod } } }",
  );
  return usage.methodUsages.find((m) => m.methodName === method);
}

describe("usage is what was served (the counting rule)", () => {
  it("a method the node does not know (eth_fooBar, -32601) is counted apart and not billed", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    const answer = await proxy.rpc(endpoint.exId, call("eth_fooBar"));
    expect(answer.status).toBe(200);
    expect((answer.body as { error: { code: number } }).error.code).toBe(-32601);
    // In a batch too, beside a call that is served.
    await proxy.rpc(endpoint.exId, [call("eth_fooBar", [], 1), call("eth_chainId", [], 2)]);
    await proxy.stages.meter.flush();
    const counts = await countsOf(endpoint.id);
    expect(counts.eth_fooBar).toMatchObject({ requests: 0, credits: 0, refused: 0, malformed: 0, unknownMethod: 2 });
    expect(counts.eth_chainId).toMatchObject({ requests: 1, credits: 1, unknownMethod: 0 });
    const { usage } = await user.client.gqlOk<{ usage: { totalUsage: number; totalRequests: number } }>(usageQuery);
    expect(usage).toMatchObject({ totalUsage: 1, totalRequests: 1 });
    expect(await shownUsageOf(user.client, "eth_fooBar")).toEqual({
      methodName: "eth_fooBar",
      requests: 0,
      total: 0,
      refused: 0,
      malformed: 0,
      unknownMethod: 2,
    });
  });

  it("calls the proxy refused (security, method rules, rate limit, verb) are counted as refused and not billed", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    // A disabled method (refused per call) and a GET (a verb the proxy does not serve).
    proxy.put(endpoint, user.viewer.id, { disabledMethods: ["eth_gasPrice"] });
    expect((await proxy.rpc(endpoint.exId, call("eth_gasPrice"))).status).toBe(200);
    expect((await fetch(`${proxy.url}/rpc/${endpoint.exId}`)).status).toBe(405);
    // An address that is not allowed (the whole request refused), beside one that is.
    proxy.put(endpoint, user.viewer.id, {
      options: { ...defaultSecurityOptions(), ips: true, ipCustomHeader: true },
      ipCustomHeaderName: "x-client-ip",
      ips: ["203.0.113.1"],
    });
    const from = (ip: string) => proxy.rpc(endpoint.exId, call("eth_blockNumber"), { headers: { "x-client-ip": ip } });
    expect((await from("203.0.113.9")).status).toBe(403);
    expect((await from("203.0.113.1")).status).toBe(200);
    // A rate limit: the plan's requests per second, set to 1 for this account.
    await proxy.db.$client.query("update subscriptions set requests_per_second = 1 where account_id = $1", [
      user.viewer.id,
    ]);
    await proxy.stages.rateLimit.reloadAll();
    proxy.put(endpoint, user.viewer.id);
    const statuses = (
      await Promise.all([1, 2, 3].map((id) => proxy.rpc(endpoint.exId, call("eth_chainId", [], id))))
    ).map((answer) => answer.status);
    const limited = statuses.filter((s) => s === 429).length;
    expect(limited).toBeGreaterThanOrEqual(1);
    await proxy.stages.meter.flush();
    const counts = await countsOf(endpoint.id);
    expect(counts.eth_gasPrice).toMatchObject({ requests: 0, credits: 0, refused: 1 });
    expect(counts.eth_blockNumber).toMatchObject({ requests: 1, credits: 1, refused: 1 });
    expect(counts.eth_chainId).toMatchObject({ requests: 3 - limited, credits: 3 - limited, refused: limited });
    expect(counts["(none)"]).toMatchObject({ requests: 0, credits: 0, refused: 1 });
    const { usage } = await user.client.gqlOk<{ usage: { totalUsage: number } }>(usageQuery);
    expect(usage.totalUsage).toBe(1 + 3 - limited);
  });

  it("a malformed request (not JSON, not a call, an empty batch) is counted apart and not billed", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    expect((await proxy.rpc(endpoint.exId, "{not json")).status).toBe(400);
    expect((await proxy.rpc(endpoint.exId, "[]")).status).toBe(400);
    expect((await proxy.rpc(endpoint.exId, { jsonrpc: "2.0", id: 1 })).status).toBe(400);
    // A batch holding one call that is not JSON-RPC: that one is malformed, the other served.
    expect((await proxy.rpc(endpoint.exId, [call("eth_chainId"), { id: 2 }])).status).toBe(200);
    await proxy.stages.meter.flush();
    const counts = await countsOf(endpoint.id);
    expect(counts["(none)"]).toMatchObject({ requests: 0, credits: 0, refused: 0, malformed: 4 });
    // The usage screen shows them among the refused calls (the proxy answered them), and apart.
    expect(await shownUsageOf(user.client, "(none)")).toEqual({
      methodName: "(none)",
      requests: 0,
      total: 0,
      refused: 4,
      malformed: 4,
      unknownMethod: 0,
    });
    expect(counts.eth_chainId).toMatchObject({ requests: 1, credits: 1, malformed: 0 });
  });

  it("each subscription notification delivered is billed as one eth_subscription call", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    const ws = new WebSocket(`${proxy.url.replace(/^http/, "ws")}/rpc/${endpoint.exId}`);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    let notifications = 0;
    const two = new Promise<void>((resolve) =>
      ws.on("message", (data) => {
        if (JSON.parse(String(data)).method === "eth_subscription" && ++notifications === 2) resolve();
      }),
    );
    ws.send(JSON.stringify(call("eth_subscribe", ["newHeads"], 7)));
    await two;
    // Closed by the client: notifications the node pushes after this reach no one and are not billed.
    ws.close();
    await new Promise((resolve) => ws.once("close", resolve));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await proxy.stages.meter.flush();
    const counts = await countsOf(endpoint.id);
    expect(counts.eth_subscribe).toMatchObject({ requests: 1, credits: 1 });
    expect(counts.eth_subscription).toMatchObject({ requests: notifications, credits: notifications, refused: 0 });
  }, 20_000);
});
