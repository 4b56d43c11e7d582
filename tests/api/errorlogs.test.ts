import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GqlClient, signUp, useTestApp } from "../support/api.ts";
import { call, type ProxyHarness, startProxyHarness } from "../unit/metering/proxy-harness.ts";

const ctx = useTestApp();
let proxy: ProxyHarness;
let deadProxy: ProxyHarness;
beforeAll(async () => {
  proxy = await startProxyHarness(ctx.app.database.url);
  // An upstream that refuses connections: every forwarded call fails upstream.
  deadProxy = await startProxyHarness(ctx.app.database.url, { upstreamUrl: "http://127.0.0.1:9" });
});
afterAll(async () => {
  await deadProxy?.close();
  await proxy?.close();
});

async function endpointOf(client: GqlClient) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string; network: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId network } }`,
  );
  return data.createEndpoint;
}

interface Log {
  timestamp: string;
  method: string;
  httpMethod: string;
  status: number;
  errorCode: number | null;
  errorKind: string;
  url: string;
  network: string;
  requestId: string;
}

const logFields =
  "timestamp account endpoint method httpMethod status url network errorCode errorKind message requestId";

describe("error logs", () => {
  it("logs each failed call (refused, limited, upstream failure), pages them newest first, and shows one in detail", async () => {
    const user = await signUp(ctx.app);
    const endpoint = await endpointOf(user.client);
    proxy.put(endpoint, user.viewer.id);
    deadProxy.put(endpoint, user.viewer.id);
    const from = new Date(Date.now() - 60_000).toISOString();

    expect((await proxy.rpc(endpoint.exId, "{not json")).status).toBe(400);
    await user.client.gqlOk(
      `mutation($e: ID!) { createRateLimiter(endpointId: $e, interval: MINUTE, rate: 1, methods: ["eth_chainId"], reason: "r", limitByIP: false) { id } }`,
      { e: endpoint.id },
    );
    await proxy.stages.rateLimit.reloadAll();
    expect((await proxy.rpc(endpoint.exId, call("eth_chainId"))).status).toBe(200);
    expect((await proxy.rpc(endpoint.exId, call("eth_chainId"))).status).toBe(429);
    expect((await deadProxy.rpc(endpoint.exId, call("eth_blockNumber"))).status).toBe(502);
    await Promise.all([proxy.stages.meter.flush(), deadProxy.stages.meter.flush()]);

    const to = new Date(Date.now() + 60_000).toISOString();
    const page = async (limit: number, nextAt?: string | null) =>
      (
        await user.client.gqlOk<{ errorLogs: { logs: Log[]; nextAt: string | null; hasMore: boolean } }>(
          `query($e: String!, $from: DateTime!, $to: DateTime!, $limit: Int!, $nextAt: String) {
            errorLogs(endpointExId: $e, from: $from, to: $to, limit: $limit, nextAt: $nextAt) { logs { ${logFields} } nextAt hasMore } }`,
          { e: endpoint.exId, from, to, limit, nextAt },
        )
      ).errorLogs;
    const all = await page(50);
    expect(all.nextAt).toBeNull();
    expect(all.hasMore).toBe(false);
    expect(all.logs.map((l) => l.errorKind).sort()).toEqual(["PARSE_ERROR", "RATE_LIMITED", "UPSTREAM_FAILED"]);
    const limited = all.logs.find((l) => l.errorKind === "RATE_LIMITED") as Log;
    expect(limited).toMatchObject({
      method: "eth_chainId",
      httpMethod: "POST",
      status: 429,
      errorCode: -32029,
      network: "ethereum-sepolia",
    });
    expect(all.logs.find((l) => l.errorKind === "UPSTREAM_FAILED")).toMatchObject({
      status: 502,
      method: "eth_blockNumber",
    });
    const times = all.logs.map((l) => Date.parse(l.timestamp));
    expect([...times].sort((x, y) => y - x)).toEqual(times);

    // Paging two at a time gives the same logs in the same order.
    const first = await page(2);
    expect(first.logs).toHaveLength(2);
    const second = await page(2, first.nextAt);
    expect([...first.logs, ...second.logs].map((l) => l.requestId)).toEqual(all.logs.map((l) => l.requestId));
    expect(second.nextAt).toBeNull();

    // By the endpoint's id as well as its exId.
    const details = await user.client.gqlOk<{
      errorLogDetails: { log: Log; request: string | null; response: string | null };
    }>(
      `query($e: String!, $r: String!) { errorLogDetails(endpointExId: $e, requestId: $r) { log { ${logFields} } request response } }`,
      { e: endpoint.id, r: limited.requestId },
    );
    expect(details.errorLogDetails.log.requestId).toBe(limited.requestId);
    expect(details.errorLogDetails.log.url).toBe(`/rpc/${endpoint.exId}`);
  });

  it("another account gets NOT_FOUND; bad ranges are refused", async () => {
    const alice = await signUp(ctx.app);
    const bob = await signUp(ctx.app);
    const endpoint = await endpointOf(alice.client);
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date().toISOString();
    const byBob = await bob.client.gql(
      `query($e: String!, $from: DateTime!, $to: DateTime!) { errorLogs(endpointExId: $e, from: $from, to: $to, limit: 10) { nextAt } }`,
      {
        e: endpoint.exId,
        from,
        to,
      },
    );
    expect(byBob.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const details = await bob.client.gql(
      `query($e: String!) { errorLogDetails(endpointExId: $e, requestId: "x") { request } }`,
      { e: endpoint.exId },
    );
    expect(details.data?.errorLogDetails).toBeUndefined();
    expect(details.errors?.[0].extensions?.code).toBe("NOT_FOUND");
    const tooMany = await alice.client.gql(
      `query($e: String!, $from: DateTime!, $to: DateTime!) { errorLogs(endpointExId: $e, from: $from, to: $to, limit: 1000) { nextAt } }`,
      {
        e: endpoint.exId,
        from,
        to,
      },
    );
    expect(tooMany.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/limit" }] });
    const backwards = await alice.client.gql(
      `query($e: String!, $from: DateTime!, $to: DateTime!) { errorLogs(endpointExId: $e, from: $from, to: $to, limit: 10) { nextAt } }`,
      {
        e: endpoint.exId,
        from: to,
        to: from,
      },
    );
    expect(backwards.errors?.[0].extensions).toMatchObject({ code: "BAD_USER_INPUT", fields: [{ pointer: "/to" }] });
  });
});
