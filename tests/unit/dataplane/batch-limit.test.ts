import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/platform/config.ts";
import { call, type Harness, rpc, startHarness, wsCall } from "./harness.ts";

const LIMIT = 3;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ withMeter: true, maxBatchCalls: LIMIT });
});
afterAll(async () => {
  await h?.close();
});

const batchOf = (n: number) => Array.from({ length: n }, (_, i) => call("eth_chainId", [], 10 + i));
const tooLarge = (id: number | null) => [
  { jsonrpc: "2.0", id, error: { code: -32600, message: "batch too large", data: { limit: LIMIT } } },
];

describe("the batch-size limit", () => {
  it("HTTP: a batch at the limit is served; one call more is Geth's single error, metered as one refusal", async () => {
    h.put({ exId: "batch-http" });
    const at = await rpc(h.port, "/rpc/batch-http", batchOf(LIMIT));
    expect(at.status).toBe(200);
    expect((at.body as { result: string }[]).map((a) => a.result)).toEqual(["0xaa36a7", "0xaa36a7", "0xaa36a7"]);

    h.meterEvents.length = 0;
    const over = await rpc(h.port, "/rpc/batch-http", batchOf(LIMIT + 1));
    expect(over.status).toBe(200);
    expect(over.body).toEqual(tooLarge(10));
    expect(over.headers["x-request-id"]).toBeTruthy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.meterEvents).toHaveLength(1);
    expect(h.meterEvents[0].requestRefusal?.kind).toBe("BATCH_TOO_LARGE");
    expect(h.meterEvents[0].methods).toHaveLength(LIMIT + 1);
    // A single call is never a batch, whatever the limit.
    expect((await rpc(h.port, "/rpc/batch-http", call("eth_chainId"))).status).toBe(200);
  });

  it("WebSocket: a message over the limit gets the same answer and the connection stays open", async () => {
    h.put({ exId: "batch-ws" });
    const outcome = await wsCall(h.port, "/rpc/batch-ws", batchOf(LIMIT + 1));
    if (!outcome.opened) throw new Error(`upgrade refused: ${outcome.status}`);
    expect(outcome.answer).toEqual(tooLarge(10));
    const next = new Promise((resolve) => outcome.ws.once("message", (data) => resolve(JSON.parse(data.toString()))));
    outcome.ws.send(JSON.stringify(batchOf(LIMIT)));
    expect(await next).toHaveLength(LIMIT);
    outcome.ws.close();
  });

  it("is an operator setting: NODEPLANE_MAX_BATCH_CALLS, Geth's 1000 by default, a positive integer", () => {
    expect(loadConfig({}).maxBatchCalls).toBe(1000);
    expect(loadConfig({ NODEPLANE_MAX_BATCH_CALLS: "50" }).maxBatchCalls).toBe(50);
    for (const bad of ["0", "-1", "1.5", "many"]) {
      expect(() => loadConfig({ NODEPLANE_MAX_BATCH_CALLS: bad })).toThrow(
        /NODEPLANE_MAX_BATCH_CALLS must be a positive integer/,
      );
    }
  });
});
