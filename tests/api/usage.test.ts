import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
