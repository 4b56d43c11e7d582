import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type GqlClient, signIn, signUp, useTestApp } from "../support/api.ts";
import { describeWithRedis, redisUrl } from "../support/redis.ts";
import { type ServiceProcess, startServiceProcess } from "../support/service-process.ts";
import { call, type ProxyHarness, startProxyHarness } from "../unit/metering/proxy-harness.ts";

const ctx = useTestApp();
const DEMO_PASSWORD = "demo-password-for-tests";

const limiterFields = `id interval key methods limitByIP createdAt
  rates { id rate source status endpoint audit { date reason user userRole action subject } }
  audit { date reason user userRole action subject changes }`;

interface Limiter {
  id: string;
  interval: string;
  methods: string[];
  limitByIP: boolean;
  rates: { id: string; rate: number; status: string; audit: { reason: string; user: string; userRole: string }[] }[];
  audit: { reason: string; user: string; userRole: string; action: string; subject: string }[];
}

async function endpointOf(client: GqlClient) {
  const data = await client.gqlOk<{ createEndpoint: { id: string; exId: string; network: string; chain: string } }>(
    `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId network chain } }`,
  );
  return data.createEndpoint;
}

const createLimiter = (client: GqlClient, vars: Record<string, unknown>) =>
  client.gql<{ createRateLimiter: Limiter }>(
    `mutation($endpointId: ID!, $interval: RateLimiterInterval!, $rate: Int!, $methods: [String!]!, $reason: String!, $limitByIP: Boolean!) {
      createRateLimiter(endpointId: $endpointId, interval: $interval, rate: $rate, methods: $methods, reason: $reason, limitByIP: $limitByIP) { ${limiterFields} } }`,
    vars,
  );

describe("rate limiters and rate limits (API)", () => {
  it("creates, lists, updates, disables and deletes a limiter, auditing each change with user and role", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    const created = await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 30,
      methods: ["eth_call", "eth_getLogs"],
      reason: "protect the node",
      limitByIP: true,
    });
    expect(created.errors).toBeUndefined();
    const limiter = created.data?.createRateLimiter as Limiter;
    expect(limiter).toMatchObject({
      interval: "MINUTE",
      methods: ["eth_call", "eth_getLogs"],
      limitByIP: true,
      key: "endpoint+ip",
    });
    expect(limiter.rates).toMatchObject([{ rate: 30, status: "ENABLED", source: "USER", endpoint: endpoint.id }]);
    expect(limiter.audit).toMatchObject([
      { reason: "protect the node", user: owner.email, userRole: "OWNER", action: "CREATE" },
    ]);

    const updated = await owner.client.gqlOk<{ updateRateLimiter: Limiter }>(
      `mutation($e: ID!, $id: ID!) { updateRateLimiter(endpointId: $e, chain: "ethereum", network: "ethereum-sepolia", rateLimiterId: $id, interval: SECOND, reason: "tighter") { ${limiterFields} } }`,
      { e: endpoint.id, id: limiter.id },
    );
    expect(updated.updateRateLimiter.interval).toBe("SECOND");
    expect(updated.updateRateLimiter.methods).toEqual(["eth_call", "eth_getLogs"]);

    const rateId = limiter.rates[0].id;
    const disabled = await owner.client.gqlOk<{ updateRateLimiterRate: Limiter }>(
      `mutation($e: ID!, $r: ID!) { updateRateLimiterRate(endpointId: $e, rateLimiterRateId: $r, rate: 10, enabled: false, reason: "pause it") { ${limiterFields} } }`,
      { e: endpoint.id, r: rateId },
    );
    expect(disabled.updateRateLimiterRate.rates[0]).toMatchObject({ rate: 10, status: "DISABLED" });
    expect(disabled.updateRateLimiterRate.rates[0].audit[0]).toMatchObject({ reason: "pause it", userRole: "OWNER" });
    expect(disabled.updateRateLimiterRate.audit.map((a) => a.reason)).toEqual([
      "pause it",
      "tighter",
      "protect the node",
    ]);

    const list = await owner.client.gqlOk<{ rateLimiters: Limiter[] }>(
      `query($e: ID!) { rateLimiters(endpointId: $e, chain: "ethereum", network: "ethereum-sepolia") { id } }`,
      { e: endpoint.id },
    );
    expect(list.rateLimiters.map((l) => l.id)).toEqual([limiter.id]);
    const wrongNetwork = await owner.client.gql(
      `query($e: ID!) { rateLimiters(endpointId: $e, network: "ethereum-mainnet") { id } }`,
      {
        e: endpoint.id,
      },
    );
    expect(wrongNetwork.errors?.[0].extensions?.code).toBe("NOT_FOUND");

    const deleted = await owner.client.gqlOk<{ deleteRateLimiter: { success: boolean; message: string } }>(
      `mutation($e: ID!, $id: ID!) { deleteRateLimiter(endpointId: $e, rateLimiterId: $id) { success message } }`,
      { e: endpoint.id, id: limiter.id },
    );
    expect(deleted.deleteRateLimiter.success).toBe(true);
    const limits = await owner.client.gqlOk<{ rateLimits: { audit: { action: string; subject: string }[] } }>(
      `query($e: ID!) { rateLimits(endpointId: $e) { audit { action subject } } }`,
      { e: endpoint.id },
    );
    expect(limits.rateLimits.audit[0]).toEqual({ action: "DELETE", subject: "RATE_LIMITER" });
  });

  it("validates input by JSON pointer", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    const cases: [Record<string, unknown>, string][] = [
      [{ rate: 0 }, "/rate"],
      [{ methods: [] }, "/methods"],
      [{ methods: ["bad method!"] }, "/methods/0"],
      [{ reason: "" }, "/reason"],
    ];
    for (const [change, pointer] of cases) {
      const { errors } = await createLimiter(owner.client, {
        endpointId: endpoint.id,
        interval: "SECOND",
        rate: 5,
        methods: ["eth_call"],
        reason: "r",
        limitByIP: false,
        ...change,
      });
      expect(errors?.[0].extensions, JSON.stringify(change)).toMatchObject({
        code: "BAD_USER_INPUT",
        fields: [{ pointer }],
      });
    }
  });

  it("shows defaults (the plan's RPS per account) and manages limit and key overrides", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    const fields =
      "endpointId defaults { bucket key rateLimit { id rateLimit audit { reason } } } limitOverrides { bucket key rateLimit { id rateLimit audit { reason } } } keyOverrides { bucket key rateLimit { id rateLimit } }";
    const initial = await owner.client.gqlOk<{
      rateLimits: { defaults: { bucket: string; key: string; rateLimit: { rateLimit: number | null } }[] };
    }>(`query($e: ID!) { rateLimits(endpointId: $e) { ${fields} } }`, { e: endpoint.id });
    expect(initial.rateLimits.defaults.map((d) => [d.bucket, d.key, d.rateLimit.rateLimit])).toEqual([
      ["RPS", "account", 15],
      ["RPM", "endpoint", null],
      ["RPD", "endpoint", null],
    ]);
    const withOverride = await owner.client.gqlOk<{
      createRateLimitOverride: {
        limitOverrides: { bucket: string; rateLimit: { id: string; rateLimit: number; audit: { reason: string } } }[];
      };
    }>(
      `mutation($e: ID!) { createRateLimitOverride(endpointId: $e, bucket: RPM, rateLimit: 100, reason: "a batch job") { ${fields} } }`,
      { e: endpoint.id },
    );
    const override = withOverride.createRateLimitOverride.limitOverrides[0];
    expect(override).toMatchObject({ bucket: "RPM", rateLimit: { rateLimit: 100, audit: { reason: "a batch job" } } });
    const withKey = await owner.client.gqlOk<{
      createRateLimitKeyOverride: { keyOverrides: { bucket: string; key: string; rateLimit: { id: string } }[] };
    }>(
      `mutation($e: ID!) { createRateLimitKeyOverride(endpointId: $e, bucket: RPM, reason: "per client") { ${fields} } }`,
      { e: endpoint.id },
    );
    expect(withKey.createRateLimitKeyOverride.keyOverrides).toMatchObject([{ bucket: "RPM", key: "endpoint+ip" }]);
    const removed = await owner.client.gqlOk<{ deleteRateLimitOverride: { limitOverrides: unknown[] } }>(
      `mutation($e: ID!, $o: ID!) { deleteRateLimitOverride(endpointId: $e, overrideId: $o, reason: "done") { ${fields} } }`,
      { e: endpoint.id, o: override.rateLimit.id },
    );
    expect(removed.deleteRateLimitOverride.limitOverrides).toEqual([]);
    const removedKey = await owner.client.gqlOk<{ deleteRateLimitKeyOverride: { keyOverrides: unknown[] } }>(
      `mutation($e: ID!, $o: ID!) { deleteRateLimitKeyOverride(endpointId: $e, overrideId: $o, reason: "done") { ${fields} } }`,
      { e: endpoint.id, o: withKey.createRateLimitKeyOverride.keyOverrides[0].rateLimit.id },
    );
    expect(removedKey.deleteRateLimitKeyOverride.keyOverrides).toEqual([]);
  });

  it("another account's endpoint answers NOT_FOUND; a VIEWER reads but changes nothing", async () => {
    const alice = await signUp(ctx.app);
    const bob = await signUp(ctx.app);
    const endpoint = await endpointOf(alice.client);
    const limiter = (
      await createLimiter(alice.client, {
        endpointId: endpoint.id,
        interval: "DAY",
        rate: 5,
        methods: ["*"],
        reason: "r",
        limitByIP: false,
      })
    ).data?.createRateLimiter as Limiter;
    const byBob = [
      await bob.client.gql(`query($e: ID!) { rateLimiters(endpointId: $e) { id } }`, { e: endpoint.id }),
      await bob.client.gql(`query($e: ID!) { rateLimits(endpointId: $e) { endpointId } }`, { e: endpoint.id }),
      await createLimiter(bob.client, {
        endpointId: endpoint.id,
        interval: "DAY",
        rate: 5,
        methods: ["*"],
        reason: "r",
        limitByIP: false,
      }),
      await bob.client.gql(
        `mutation($e: ID!, $id: ID!) { deleteRateLimiter(endpointId: $e, rateLimiterId: $id) { success } }`,
        {
          e: endpoint.id,
          id: limiter.id,
        },
      ),
    ];
    for (const r of byBob) expect(r.errors?.[0].extensions?.code).toBe("NOT_FOUND");

    const owner = await signIn(ctx.app, "demo@nodeplane.local", DEMO_PASSWORD);
    const viewer = await signIn(ctx.app, "viewer@nodeplane.local", DEMO_PASSWORD);
    const demoEndpoint = await owner.client.gqlOk<{ endpoints: { edges: { node: { id: string } }[] } }>(
      "{ endpoints(first: 1) { edges { node { id } } } }",
    );
    const demoId = demoEndpoint.endpoints.edges[0]?.node.id ?? (await endpointOf(owner.client)).id;
    const refused = await createLimiter(viewer.client, {
      endpointId: demoId,
      interval: "DAY",
      rate: 5,
      methods: ["*"],
      reason: "r",
      limitByIP: false,
    });
    expect(refused.errors?.[0].extensions?.code).toBe("FORBIDDEN");
    const read = await viewer.client.gql(`query($e: ID!) { rateLimiters(endpointId: $e) { id } }`, { e: demoId });
    expect(read.errors).toBeUndefined();
  });
});

describe("rate limits enforced by the proxy", () => {
  let proxy: ProxyHarness;
  beforeAll(async () => {
    proxy = await startProxyHarness(ctx.app.database.url);
  });
  afterAll(async () => proxy?.close());

  it("N + k calls inside a window: exactly k answered 429 with a JSON-RPC error naming the limit", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    proxy.put(endpoint, owner.viewer.id);
    await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 6,
      methods: ["eth_chainId"],
      reason: "r",
      limitByIP: false,
    });
    await proxy.stages.rateLimit.reloadAll();
    const statuses: number[] = [];
    let lastError: { code: number; message: string; data: Record<string, unknown> } | undefined;
    for (let i = 0; i < 6 + 4; i++) {
      const answer = await proxy.rpc(endpoint.exId, call("eth_chainId"));
      statuses.push(answer.status);
      if (answer.status === 429) lastError = (answer.body as { error: typeof lastError }).error;
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(lastError?.code).toBe(-32029);
    expect(lastError?.message).toMatch(/6 calls per minute to eth_chainId/);
    // Other methods are not limited by this limiter.
    expect((await proxy.rpc(endpoint.exId, call("eth_blockNumber"))).status).toBe(200);
  });

  it("a 429 says when to retry (Retry-After, from the limiter) and names the limit, not the limiter's id: HTTP and WebSocket", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    proxy.put(endpoint, owner.viewer.id);
    const created = await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 2,
      methods: ["eth_chainId"],
      reason: "r",
      limitByIP: false,
    });
    const limiterId = created.data?.createRateLimiter.id as string;
    expect(limiterId).toBeTruthy();
    await proxy.stages.rateLimit.reloadAll();
    const post = () =>
      fetch(`${proxy.url}/rpc/${endpoint.exId}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(call("eth_chainId")),
      });
    for (let i = 0; i < 2; i++) expect((await post()).status).toBe(200);
    const limited = await post();
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const { error } = (await limited.json()) as { error: { message: string; data: Record<string, unknown> } };
    expect(error.message).toMatch(/2 calls per minute to eth_chainId/);
    expect(error.message).toContain(`Retry in ${retryAfter} s.`);
    expect(JSON.stringify(error)).not.toContain(limiterId);
    expect(error.data.retryAfter).toBe(retryAfter);

    // The same limit over a WebSocket: the answer (a frame, no headers) says when in its data, and no id.
    const ws = new WebSocket(`${proxy.url.replace(/^http/, "ws")}/rpc/${endpoint.exId}`);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const answer = new Promise<string>((resolve) => ws.once("message", (data) => resolve(String(data))));
    ws.send(JSON.stringify(call("eth_chainId", [], 9)));
    const frame = await answer;
    ws.close();
    const wsError = (
      JSON.parse(frame) as { id: number; error: { code: number; message: string; data: Record<string, unknown> } }
    ).error;
    expect(wsError.code).toBe(-32029);
    expect(frame).not.toContain(limiterId);
    expect(wsError.data.retryAfter).toBeGreaterThanOrEqual(1);
    expect(wsError.data.retryAfter).toBeLessThanOrEqual(60);
    expect(wsError.message).toContain(`Retry in ${wsError.data.retryAfter} s.`);
  });

  it("per client IP: each address has its own count", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    proxy.put(endpoint, owner.viewer.id, {
      options: {
        ...(await import("../../server/dataplane/proxy/endpoint.ts")).defaultSecurityOptions(),
        ipCustomHeader: true,
      },
      ipCustomHeaderName: "x-client-ip",
    });
    await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 3,
      methods: ["*"],
      reason: "r",
      limitByIP: true,
    });
    await proxy.stages.rateLimit.reloadAll();
    const refusedFor = async (ip: string, n: number) => {
      let refused = 0;
      for (let i = 0; i < n; i++) {
        if ((await proxy.rpc(endpoint.exId, call("eth_chainId"), { headers: { "x-client-ip": ip } })).status === 429)
          refused++;
      }
      return refused;
    };
    expect(await refusedFor("203.0.113.1", 3 + 2)).toBe(2);
    expect(await refusedFor("203.0.113.2", 3 + 1)).toBe(1);
  });
});

describeWithRedis("rate limits shared through Redis", () => {
  let first: ProxyHarness;
  let second: ProxyHarness;
  beforeAll(async () => {
    first = await startProxyHarness(ctx.app.database.url, { redisUrl: redisUrl() });
    second = await startProxyHarness(ctx.app.database.url, { redisUrl: redisUrl(), upstreamUrl: first.upstreamUrl });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it("two proxies with their own stages and connections share one limit: N + k across both → exactly k refused", async () => {
    const owner = await signUp(ctx.app);
    const endpoint = await endpointOf(owner.client);
    first.put(endpoint, owner.viewer.id);
    second.put(endpoint, owner.viewer.id);
    await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 8,
      methods: ["*"],
      reason: "r",
      limitByIP: false,
    });
    await Promise.all([first.stages.rateLimit.reloadAll(), second.stages.rateLimit.reloadAll()]);
    let refused = 0;
    for (let i = 0; i < 8 + 5; i++) {
      const proxy = i % 2 ? first : second;
      if ((await proxy.rpc(endpoint.exId, call("eth_chainId"))).status === 429) refused++;
    }
    expect(refused).toBe(5);
  });
});

describeWithRedis("rate limits shared by two service processes through Redis", () => {
  let processes: ServiceProcess[] = [];
  beforeAll(async () => {
    const env = { DATABASE_URL: ctx.app.database.url, REDIS_URL: redisUrl(), NODEPLANE_ROLES: "proxy" };
    processes = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
  });

  const rpcTo = async (base: string, path: string) => {
    const response = await fetch(`${base}/rpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call("eth_chainId")),
    });
    await response.arrayBuffer();
    return response.status;
  };

  it("a limiter made through the API applies in both processes at once: N + k calls across them → exactly k refused", async () => {
    const owner = await signUp(ctx.app);
    const { createEndpoint: endpoint } = await owner.client.gqlOk<{
      createEndpoint: { id: string; exId: string; initialToken: string };
    }>(
      `mutation { createEndpoint(input: { chain: "ethereum", network: "ethereum-sepolia" }) { id exId initialToken } }`,
    );
    // The token made with the endpoint, in the path as a client would send it.
    const path = `${endpoint.exId}/${endpoint.initialToken}`;
    // Each process learns of the new endpoint through the endpoint directory's notifications.
    for (const p of processes) await expect.poll(() => rpcTo(p.url, path), { timeout: 10_000 }).not.toBe(404);
    const created = await createLimiter(owner.client, {
      endpointId: endpoint.id,
      interval: "MINUTE",
      rate: 8,
      methods: ["*"],
      reason: "shared limit",
      limitByIP: false,
    });
    expect(created.errors).toBeUndefined();
    // The change reaches the other processes by NOTIFY (their periodic reload is 30 s away).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const statuses: number[] = [];
    for (let i = 0; i < 8 + 5; i++) statuses.push(await rpcTo(processes[i % 2].url, path));
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    // The calls before the limit went through both processes.
    expect(statuses.slice(0, 8).every((status) => status !== 429)).toBe(true);
  }, 60_000);
});
