import { describe, expect, it } from "vitest";
import {
  createDestination,
  type FunctionInvoker,
  type SnowflakeAttributes,
} from "../../../server/dataplane/destinations/index.ts";
import { testEgress } from "../../support/egress.ts";

const ctx = { streamId: "s-1", network: "local", dataset: "BLOCK" };

describe("snowflake destination", () => {
  const password = "snowflake-Secret-Password-42";
  const attrs: SnowflakeAttributes = {
    type: "SNOWFLAKE",
    username: "loader",
    password,
    account: "xy12345.eu-central-1",
    warehouse: "COMPUTE_WH",
    database: "CHAIN",
    schema: "PUBLIC",
    tableName: "BLOCKS",
    // A loopback port nothing listens on: the same failure path as an unreachable account, without DNS.
    host: "127.0.0.1",
    port: 1,
    protocol: "http",
  };

  it("test() fails with the reason, promptly and without the password", async () => {
    const d = createDestination(attrs, ctx, { egress: testEgress });
    const t0 = Date.now();
    const r = await d.test();
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/^Snowflake: cannot connect to account xy12345\.eu-central-1: /);
    expect(r.message).not.toContain(password);
    expect(Date.now() - t0).toBeLessThan(20_000);
    const err = (await d.deliver({ startBlock: 1, endBlock: 1, payloadJson: "[]" }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^Snowflake: cannot connect/);
    expect(err.message).not.toContain(password);
    await d.close();
  }, 40_000);

  it("rejects identifiers that are not plain names", () => {
    expect(() => createDestination({ ...attrs, tableName: "BLOCKS; DROP" }, ctx, { egress: testEgress })).toThrow(
      'tableName "BLOCKS; DROP" must be a plain Snowflake identifier',
    );
  });
});

describe("function destination", () => {
  it("cannot be created until the functions runtime is connected", () => {
    expect(() => createDestination({ type: "FUNCTION", functionID: "fn-1" }, ctx, { egress: testEgress })).toThrow(
      "functions runtime not connected: FUNCTION destinations cannot run yet",
    );
  });

  it("hands batches to the invoker for the stream's account, with metadata; a test is marked as one", async () => {
    const calls: unknown[] = [];
    const invoker: FunctionInvoker = {
      async invoke(call, payload, options) {
        calls.push({ call, payload, timeoutMs: options.timeoutMs });
        return { ok: true };
      },
    };
    const d = createDestination(
      { type: "FUNCTION", functionID: "fn-1", postTimeoutSec: 5 },
      { ...ctx, accountId: "acct-1", metadata: "BODY" },
      { egress: testEgress, functionInvoker: invoker },
    );
    await d.deliver({ startBlock: 3, endBlock: 3, payloadJson: '[{"a":1}]' });
    await d.test();
    expect(calls).toEqual([
      {
        call: {
          accountId: "acct-1",
          functionId: "fn-1",
          streamId: "s-1",
          network: "local",
          dataset: "BLOCK",
          blockNumber: 3,
        },
        payload: {
          dataJson: '[{"a":1}]',
          metadata: expect.objectContaining({ batch_start_range: 3, batch_end_range: 3, network: "local" }),
        },
        timeoutMs: 5000,
      },
      {
        call: expect.objectContaining({ accountId: "acct-1", functionId: "fn-1", test: true }),
        payload: { dataJson: "[]", metadata: { test: true } },
        timeoutMs: 5000,
      },
    ]);
  });

  it("refuses to run without the stream's account", () => {
    const invoker: FunctionInvoker = { invoke: async () => ({ ok: true }) };
    expect(() =>
      createDestination({ type: "FUNCTION", functionID: "fn-1" }, ctx, {
        egress: testEgress,
        functionInvoker: invoker,
      }),
    ).toThrow("a function destination needs the stream's account");
  });
});

describe("unsupported destination types", () => {
  it("says so", () => {
    expect(() => createDestination({ type: "KAFKA" } as never, ctx, { egress: testEgress })).toThrow(
      "destination type KAFKA is not supported",
    );
  });
});
