import { describe, expect, it } from "vitest";
import { capBody, maskUrl } from "../../../server/dataplane/metering/meter.ts";
import { billingPeriod } from "../../../server/domains/account/billing-period.ts";
import { CreditTable } from "../../../server/domains/usage/credits.ts";

const table = new CreditTable();

describe("credits", () => {
  it("prices a call: base per chain × method multiplier × archive multiplier", () => {
    expect(table.cost("ethereum-sepolia", "eth_blockNumber", [], 1000)).toEqual({
      credits: 1,
      multiplier: 1,
      archive: false,
    });
    expect(table.cost("ethereum-sepolia", "trace_block", ["latest"], 1000).credits).toBe(4);
    expect(table.cost("ethereum-sepolia", "debug_traceTransaction", ["0xab"], 1000).credits).toBe(4);
    expect(table.cost("ethereum-sepolia", "eth_getLogs", [{ fromBlock: "latest" }], 1000).credits).toBe(2);
    expect(table.cost("solana-mainnet", "getBalance", [], undefined).credits).toBe(2);
  });

  it("marks archive calls: a block more than 128 behind the head, or earliest", () => {
    const head = 10_000;
    expect(table.isArchive("eth_getBalance", ["0x1", "0x1"], head)).toBe(true);
    expect(table.isArchive("eth_getBalance", ["0x1", `0x${(head - 10).toString(16)}`], head)).toBe(false);
    expect(table.isArchive("eth_getBalance", ["0x1", "latest"], head)).toBe(false);
    expect(table.isArchive("eth_call", [{}, "earliest"], head)).toBe(true);
    expect(table.isArchive("eth_getLogs", [{ fromBlock: "0x10" }], head)).toBe(true);
    expect(table.isArchive("eth_getBlockByNumber", ["0x0", false], undefined)).toBe(true);
    expect(table.isArchive("eth_getBlockByNumber", ["0x10", false], undefined)).toBe(false);
    expect(table.cost("ethereum-sepolia", "trace_block", ["0x1"], head)).toEqual({
      credits: 8,
      multiplier: 4,
      archive: true,
    });
  });
});

describe("error log bodies and URLs", () => {
  it("masks the token in /rpc/<exId>/<token> and drops the query string", () => {
    expect(maskUrl("/rpc/abc/secret-token")).toBe("/rpc/abc/****");
    expect(maskUrl("/rpc/abc/secret-token?x=1")).toBe("/rpc/abc/****");
    expect(maskUrl("/rpc/abc")).toBe("/rpc/abc");
  });

  it("caps bodies at 16 KiB, saying how much was cut", () => {
    expect(capBody("{}")).toBe("{}");
    const big = capBody("x".repeat(20_000)) as string;
    expect(big.startsWith("x".repeat(16 * 1024))).toBe(true);
    expect(big).toContain(`${20_000 - 16 * 1024} more bytes not kept`);
  });
});

describe("billing periods", () => {
  const sub = {
    currentPeriodStart: new Date("2026-01-15T00:00:00Z"),
    currentPeriodEnd: new Date("2026-02-15T00:00:00Z"),
  };
  it("is the subscription's period, rolls over past its end, and steps back by index", () => {
    expect(billingPeriod(sub, new Date("2026-01-20T00:00:00Z"))).toEqual({
      start: sub.currentPeriodStart,
      end: sub.currentPeriodEnd,
    });
    expect(billingPeriod(sub, new Date("2026-03-01T00:00:00Z"))).toEqual({
      start: new Date("2026-02-15T00:00:00Z"),
      end: new Date("2026-03-15T00:00:00Z"),
    });
    expect(billingPeriod(sub, new Date("2026-01-20T00:00:00Z"), 1)).toEqual({
      start: new Date("2025-12-15T00:00:00Z"),
      end: new Date("2026-01-15T00:00:00Z"),
    });
  });
});
