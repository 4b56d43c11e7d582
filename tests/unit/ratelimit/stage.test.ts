import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  compileEndpoint as compileProxyEndpoint,
  defaultSecurityOptions,
  type EndpointRecord,
} from "../../../server/dataplane/proxy/endpoint.ts";
import type { ProxyRequestInfo, RateDecision } from "../../../server/dataplane/proxy/stages.ts";
import {
  FlexibleRateLimitStage,
  type LimitSource,
  RATE_LIMITED_CODE,
} from "../../../server/dataplane/ratelimit/stage.ts";
import { type LimiterRow, limitSourceOf, type OverrideRow } from "../../../server/domains/ratelimits/limit-source.ts";
import { describeWithRedis, redisKeyPrefix, redisUrl } from "../../support/redis.ts";

const ACCOUNT = "00000000-0000-4000-8000-000000000001";
const ENDPOINT = "00000000-0000-4000-8000-0000000000e1";

/** The rate-limit rules over what the stage would read from the database, held in arrays the test changes. */
function source(state: { rps: number; limiters?: LimiterRow[]; overrides?: OverrideRow[] }): LimitSource {
  return limitSourceOf({
    allAccountRps: async () => [{ accountId: ACCOUNT, rps: state.rps }],
    planRps: async () => state.rps,
    limiters: async () => state.limiters ?? [],
    overrides: async () => state.overrides ?? [],
  });
}

const endpoint = compileProxyEndpoint({
  id: ENDPOINT,
  exId: "ex1",
  accountId: ACCOUNT,
  network: "ethereum-sepolia",
  chainId: 11155111,
  status: "ACTIVE",
  options: defaultSecurityOptions(),
  ipCustomHeaderName: null,
  tokenHashes: [],
  jwts: [],
  referrers: [],
  ips: [],
  domainMasks: [],
  requestFilterMethods: [],
  disabledMethods: [],
} satisfies EndpointRecord);

const request = (methods: string[], clientIp = "10.0.0.1"): ProxyRequestInfo => ({
  endpoint,
  transport: "http",
  clientIp,
  methods,
});

async function outcome(
  stage: FlexibleRateLimitStage,
  methods: string[],
  ip?: string,
): Promise<RateDecision | undefined> {
  return await stage.admit(request(methods, ip));
}

/** How many of `n` single calls are refused. */
async function refusedOf(stage: FlexibleRateLimitStage, n: number, method = "eth_blockNumber", ip?: string) {
  let refused = 0;
  for (let i = 0; i < n; i++) if (await outcome(stage, [method], ip)) refused++;
  return refused;
}

const limiter = (over: Partial<LimiterRow>): LimiterRow => ({
  id: "00000000-0000-4000-8000-0000000000a1",
  accountId: ACCOUNT,
  endpointId: ENDPOINT,
  interval: "MINUTE",
  methods: ["eth_call"],
  limitByIp: false,
  rate: 3,
  status: "ENABLED",
  ...over,
});

describe("rate-limit stage in memory", () => {
  it("admits synchronously and refuses exactly the k calls above the plan's RPS, with 429 naming the limit", async () => {
    const stage = await new FlexibleRateLimitStage({ source: source({ rps: 10 }), refreshMs: 0 }).start();
    const first = stage.admit(request(["eth_blockNumber"]));
    expect(first instanceof Promise).toBe(false);
    expect(first).toBeUndefined();
    expect(await refusedOf(stage, 9 + 4)).toBe(4);
    const refused = (await outcome(stage, ["eth_chainId"])) as {
      refuse: { http: number; code: number; message: string; data: { limit: string } };
    };
    expect(refused.refuse).toMatchObject({ http: 429, code: RATE_LIMITED_CODE, data: { limit: "PLAN_RPS", rate: 10 } });
    expect(refused.refuse.message).toMatch(/10 requests per second/);
    stage.close();
  });

  it("counts each call of a batch and refuses only those past the limit", async () => {
    const stage = await new FlexibleRateLimitStage({ source: source({ rps: 5 }), refreshMs: 0 }).start();
    const decision = await outcome(stage, ["a", "b", "c", "d", "e", "f", "g"]);
    expect(decision && "perCall" in decision).toBe(true);
    const perCall = (decision as { perCall: unknown[] }).perCall;
    expect(perCall.map((r) => (r ? "refused" : "ok"))).toEqual(["ok", "ok", "ok", "ok", "ok", "refused", "refused"]);
    stage.close();
  });

  it("limits listed methods per interval, other methods untouched, and per client IP when asked", async () => {
    const state = { rps: 1000, limiters: [limiter({ rate: 3 })] };
    const stage = await new FlexibleRateLimitStage({ source: source(state), refreshMs: 0 }).start();
    expect(await refusedOf(stage, 3 + 2, "eth_call")).toBe(2);
    expect(await refusedOf(stage, 10, "eth_getBalance")).toBe(0);
    const limited = (await outcome(stage, ["eth_call"])) as {
      refuse: { message: string; data: Record<string, unknown> };
    };
    expect(limited.refuse.message).toContain("eth_call");
    expect(limited.refuse.data).toMatchObject({ limit: "RATE_LIMITER", rate: 3, interval: "MINUTE" });

    state.limiters = [limiter({ id: "00000000-0000-4000-8000-0000000000a2", rate: 2, limitByIp: true })];
    await stage.reloadEndpoint({ accountId: ACCOUNT, endpointId: ENDPOINT });
    expect(await refusedOf(stage, 2 + 3, "eth_call", "10.0.0.1")).toBe(3);
    expect(await refusedOf(stage, 2 + 1, "eth_call", "10.0.0.2")).toBe(1);
    stage.close();
  });

  it("a disabled rate limits nothing; the lowest enabled rate applies", async () => {
    const state = { rps: 1000, limiters: [limiter({ rate: 1, status: "DISABLED" })] };
    const stage = await new FlexibleRateLimitStage({ source: source(state), refreshMs: 0 }).start();
    expect(await refusedOf(stage, 5, "eth_call")).toBe(0);
    stage.close();
  });

  it("bucket overrides: a lower RPM for the endpoint, and RPS counted per client IP", async () => {
    const state = {
      rps: 1000,
      overrides: [
        { accountId: ACCOUNT, endpointId: ENDPOINT, kind: "LIMIT", bucket: "RPM", rateLimit: 4 },
      ] as OverrideRow[],
    };
    const stage = await new FlexibleRateLimitStage({ source: source(state), refreshMs: 0 }).start();
    expect(await refusedOf(stage, 4 + 3)).toBe(3);
    state.overrides = [
      { accountId: ACCOUNT, endpointId: ENDPOINT, kind: "LIMIT", bucket: "RPS", rateLimit: 2 },
      { accountId: ACCOUNT, endpointId: ENDPOINT, kind: "KEY", bucket: "RPS", rateLimit: null },
    ];
    await stage.reloadEndpoint({ accountId: ACCOUNT, endpointId: ENDPOINT });
    expect(await refusedOf(stage, 2 + 1, "x", "10.1.0.1")).toBe(1);
    expect(await refusedOf(stage, 2 + 1, "x", "10.1.0.2")).toBe(1);
    stage.close();
  });
});

describeWithRedis("rate-limit stage on Redis", () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    for (const c of clients) c.disconnect();
  });

  it("two stages with their own connections share one limit: N + k calls across both → exactly k refused", async () => {
    const keyPrefix = redisKeyPrefix("rl");
    const make = async () => {
      const redis = new Redis(redisUrl(), { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
      clients.push(redis);
      return new FlexibleRateLimitStage({ source: source({ rps: 20 }), redis, keyPrefix, refreshMs: 0 }).start();
    };
    const [a, b] = await Promise.all([make(), make()]);
    let refused = 0;
    for (let i = 0; i < 20 + 7; i++) if (await (i % 2 ? a : b).admit(request(["eth_blockNumber"]))) refused++;
    expect(refused).toBe(7);
    a.close();
    b.close();
  });
});
