import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type FailedCall, type MeterSink, UsageMeter } from "../../../server/dataplane/metering/meter.ts";
import { compileEndpoint, defaultSecurityOptions } from "../../../server/dataplane/proxy/endpoint.ts";
import { refusal } from "../../../server/dataplane/proxy/jsonrpc.ts";

function recordingSink(): MeterSink & { failedCalls: FailedCall[] } {
  const failedCalls: FailedCall[] = [];
  return {
    failedCalls,
    addUsage: async () => undefined,
    addEndpointMinutes: async () => undefined,
    addFailedCalls: async (rows) => {
      failedCalls.push(...rows);
    },
    enforceMonthlyLimit: async () => ({ total: 0, limit: 1_000_000, end: new Date(8.64e15), reached: false }),
    accountsAtLimit: async () => [],
    pruneFailedCalls: async () => undefined,
    pruneEndpointMinutes: async () => undefined,
  };
}

const endpointOf = (accountId: string) =>
  compileEndpoint({
    id: randomUUID(),
    exId: randomUUID().replaceAll("-", ""),
    accountId,
    network: "ethereum-sepolia",
    chainId: 11155111,
    status: "ACTIVE",
    options: { ...defaultSecurityOptions(), tokens: true },
    ipCustomHeaderName: null,
    tokenHashes: [],
    jwts: [],
    referrers: [],
    ips: [],
    domainMasks: [],
    requestFilterMethods: [],
    disabledMethods: [],
  });

/** A request refused for want of a token, with a body: what anyone who knows the address can send. */
const refusedRequest = (endpoint: ReturnType<typeof endpointOf>) => ({
  endpoint,
  transport: "http" as const,
  clientIp: "203.0.113.9",
  methods: ["eth_chainId"],
  startedAt: 0,
  durationMs: 1,
  httpStatus: 401,
  responseBytes: null,
  refused: [],
  requestRefusal: refusal("TOKEN_REQUIRED"),
  requestBody: "x".repeat(20_000),
});

describe("error-log rows per endpoint and minute", () => {
  it("are bounded, so a flood of refused requests cannot fill the table; other endpoints keep theirs", async () => {
    const sink = recordingSink();
    const meter = new UsageMeter({
      sink,
      pricing: { cost: () => ({ credits: 1, archive: false }) },
      logsPerEndpointMinute: 5,
    });
    const flooded = endpointOf(randomUUID());
    const quiet = endpointOf(randomUUID());
    for (let i = 0; i < 40; i++) meter.record(refusedRequest(flooded));
    meter.record(refusedRequest(quiet));
    await meter.flush();
    const rowsOf = (id: string) => sink.failedCalls.filter((row) => row.endpointId === id).length;
    // Five a minute; ten when the burst crossed a minute's end.
    expect(rowsOf(flooded.record.id)).toBeGreaterThanOrEqual(5);
    expect(rowsOf(flooded.record.id)).toBeLessThanOrEqual(10);
    expect(rowsOf(quiet.record.id)).toBe(1);
    expect(meter.droppedLogs).toBe(40 - rowsOf(flooded.record.id));
  });
});
