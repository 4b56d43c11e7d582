// An add-on plan's monthly requests are counted in the account's billing period: at the period's end the
// count starts again, whether or not billing has moved the subscription row on yet.
import { type AddressInfo, createServer } from "node:net";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import {
  compileEndpoint as compileProxyEndpoint,
  defaultSecurityOptions,
  type EndpointRecord,
} from "../../../server/dataplane/proxy/endpoint.ts";
import { FlexibleRateLimitStage } from "../../../server/dataplane/ratelimit/stage.ts";
import type { AddonLimitRow } from "../../../server/domains/addons/service.ts";
import { limitSourceOf } from "../../../server/domains/ratelimits/limit-source.ts";
import { describeWithRedis, redisKeyPrefix, redisUrl } from "../../support/redis.ts";

const ACCOUNT = "00000000-0000-4000-8000-000000000001";
const ENDPOINT = "00000000-0000-4000-8000-0000000000e1";

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

/** An install of a plan allowing `monthly` calls of trace_block, in a billing period ending `endsInMs` from now. */
function install(monthly: number, endsInMs: number): AddonLimitRow {
  const end = new Date(Date.now() + endsInMs);
  return {
    accountId: ACCOUNT,
    endpointId: ENDPOINT,
    installId: "00000000-0000-4000-8000-0000000000f1",
    addonName: "Trace & Debug",
    methods: ["trace_block"],
    rpsLimit: 1000,
    monthlyRequestsLimit: monthly,
    period: { currentPeriodStart: new Date(end.getTime() - 30 * 86_400_000), currentPeriodEnd: end },
  };
}

async function stageWith(row: AddonLimitRow, redis?: Redis) {
  const source = limitSourceOf({
    allAccountRps: async () => [{ accountId: ACCOUNT, rps: 0 }],
    planRps: async () => null,
    limiters: async () => [],
    overrides: async () => [],
    addonLimits: async () => [row],
  });
  return new FlexibleRateLimitStage({
    source,
    refreshMs: 0,
    redis,
    keyPrefix: redis ? redisKeyPrefix() : undefined,
  }).start();
}

const call = async (stage: FlexibleRateLimitStage, method = "trace_block") =>
  (await stage.admit({ endpoint, transport: "http", clientIp: "10.0.0.1", methods: [method] })) as
    | { refuse: { message: string; retryAfterMs: number; data: Record<string, unknown> } }
    | undefined;

function periodBoundary(redis: () => Redis | undefined) {
  it("refuses the calls past the plan's monthly requests until the billing period ends, then counts afresh", async () => {
    const stage = await stageWith(install(3, 1500), redis());
    for (let i = 0; i < 3; i++) expect(await call(stage)).toBeUndefined();
    const refused = await call(stage);
    expect(refused?.refuse.data).toMatchObject({ limit: "ADDON_MONTHLY_REQUESTS", rate: 3, addon: "Trace & Debug" });
    expect(refused?.refuse.message).toContain("3 requests a billing period");
    // Retry when the period ends, not 30 days after the first call.
    expect(refused?.refuse.retryAfterMs).toBeLessThanOrEqual(1500);
    expect(await call(stage, "eth_blockNumber")).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, (refused?.refuse.retryAfterMs ?? 1500) + 100));
    // The next period (the row still holds the old one: the window rolls on by the billing-period rule).
    for (let i = 0; i < 3; i++) expect(await call(stage)).toBeUndefined();
    const next = await call(stage);
    expect(next?.refuse.retryAfterMs).toBeGreaterThan(27 * 86_400_000);
    stage.close();
  });
}

describe("an add-on plan's monthly requests, in memory", () => {
  periodBoundary(() => undefined);

  // A count early in a 30-day period outlives Node's longest timer (24.8 days): it must still be there later.
  it("keeps a count made early in a 30-day period", async () => {
    const stage = await stageWith(install(3, 29 * 86_400_000));
    for (let i = 0; i < 3; i++) expect(await call(stage)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await call(stage))?.refuse.data).toMatchObject({ limit: "ADDON_MONTHLY_REQUESTS", rate: 3 });
    stage.close();
  });
});

// While Redis does not answer, the count is kept in this process's memory, for the whole period too.
describe("an add-on plan's monthly requests while Redis does not answer", () => {
  it("keeps a count made early in a 30-day period", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const unreachable = new Redis(closed, "127.0.0.1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    const stage = await stageWith(install(3, 29 * 86_400_000), unreachable);
    for (let i = 0; i < 3; i++) expect(await call(stage)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await call(stage))?.refuse.data).toMatchObject({ limit: "ADDON_MONTHLY_REQUESTS", rate: 3 });
    stage.close();
    unreachable.disconnect();
  });
});

describeWithRedis("an add-on plan's monthly requests, on Redis", () => {
  let client: Redis | undefined;
  periodBoundary(() => {
    client ??= new Redis(redisUrl());
    return client;
  });
  it("closes its client", async () => {
    await client?.quit();
  });
});
